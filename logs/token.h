#ifndef EXECQ_TOKEN_H
#define EXECQ_TOKEN_H

/*
 * Secrets of 128 random bits, written as 32 lowercase hex digits: a
 * session's token, an approval request's id. getrandom(2) failing is
 * fatal (it does not, past early boot).
 */

#define TOKEN_LEN	32		/* hex digits; a buffer needs one more */

void	token_new(char out[TOKEN_LEN + 1]);
/* 1 if given (NULL: no) is token, compared in constant time. */
int	token_eq(const char *given, const char *token);

#endif
