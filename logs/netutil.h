#ifndef EXECQ_NETUTIL_H
#define EXECQ_NETUTIL_H

/* Small facts about sockets that more than one room asks. */

/*
 * The port fd is bound to (IPv4 or IPv6; a port 0 bind asks for any and
 * this says which it got), or 0 if getsockname fails. fd stays the
 * caller's: for an evhttp socket, evhttp_bound_socket_get_fd's.
 */
unsigned	netutil_port(int fd);

#endif
