/* Small facts about sockets: the port a bound socket got. */

#include <sys/socket.h>

#include <netinet/in.h>

#include "logs/netutil.h"

unsigned
netutil_port(int fd)
{
	struct sockaddr_storage	ss;
	socklen_t		sl = sizeof ss;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return (0);
	if (ss.ss_family == AF_INET6)
		return (ntohs(((struct sockaddr_in6 *)&ss)->sin6_port));
	return (ntohs(((struct sockaddr_in *)&ss)->sin_port));
}
