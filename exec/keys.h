#ifndef EXECQ_KEYS_H
#define EXECQ_KEYS_H

/*
 * tmux-style key names to the bytes a terminal sends: "Enter" is "\r",
 * "C-c" is 0x03, "Up" is "\033[A", "M-x" is "\033x", "F5" is "\033[15~".
 * Pure code.
 */

#include <stddef.h>

/*
 * Appends the bytes of one key to buf (at most cap bytes in all; *len is
 * updated). A name that is not a key is taken as literal text, as tmux's
 * send-keys does. Returns 1 if it was a key name, 0 if literal, -1 if it
 * does not fit in cap.
 */
int	keys_encode(const char *key, char *buf, size_t cap, size_t *len);

#endif
