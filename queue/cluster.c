/* Redis Cluster's slots: key to slot, slot to node, MOVED and ASK. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/hiredis.h>

#include "logs/xmalloc.h"
#include "queue/cluster.h"

/* CRC16-CCITT (XMODEM: poly 0x1021, init 0), as Redis Cluster uses it. */
static unsigned
cluster_crc16(const unsigned char *p, size_t len)
{
	unsigned	crc = 0;
	size_t		i;
	int		b;

	for (i = 0; i < len; i++) {
		crc ^= (unsigned)p[i] << 8;
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1;
		crc &= 0xffff;
	}
	return (crc);
}

unsigned
cluster_keyslot(const char *key, size_t len)
{
	const char	*open, *close;

	open = memchr(key, '{', len);
	if (open != NULL) {
		close = memchr(open + 1, '}', len - (size_t)(open + 1 - key));
		if (close != NULL && close > open + 1) {
			key = open + 1;
			len = (size_t)(close - key);
		}
	}
	return (cluster_crc16((const unsigned char *)key, len) &
	    (CLUSTER_SLOTS - 1));
}

/* The index of host:port in map, added if new. */
static int
cluster_map_add(struct cluster_map *map, const char *host, int port)
{
	unsigned	i;

	for (i = 0; i < map->nnodes; i++)
		if (map->nodes[i].port == port &&
		    strcmp(map->nodes[i].host, host) == 0)
			return ((int)i);
	map->nodes = xreallocarray(map->nodes, map->nnodes + 1,
	    sizeof *map->nodes);
	snprintf(map->nodes[map->nnodes].host, CLUSTER_HOST_MAX, "%s", host);
	map->nodes[map->nnodes].port = port;
	return ((int)map->nnodes++);
}

int
cluster_map_parse(struct cluster_map *map, const redisReply *r,
    const char *fallback_host)
{
	const redisReply	*range, *node;
	long long		 start, end, s;
	const char		*host;
	size_t			 i;
	int			 idx;

	memset(map, 0, sizeof *map);
	memset(map->slot, 0xff, sizeof map->slot);	/* -1: none */
	if (r == NULL || r->type != REDIS_REPLY_ARRAY)
		return (-1);
	for (i = 0; i < r->elements; i++) {
		range = r->element[i];
		if (range->type != REDIS_REPLY_ARRAY || range->elements < 3 ||
		    range->element[0]->type != REDIS_REPLY_INTEGER ||
		    range->element[1]->type != REDIS_REPLY_INTEGER)
			goto bad;
		node = range->element[2];
		if (node->type != REDIS_REPLY_ARRAY || node->elements < 2 ||
		    node->element[0]->type != REDIS_REPLY_STRING ||
		    node->element[1]->type != REDIS_REPLY_INTEGER)
			goto bad;
		start = range->element[0]->integer;
		end = range->element[1]->integer;
		if (start < 0 || end >= CLUSTER_SLOTS || start > end)
			goto bad;
		host = node->element[0]->str;
		if (*host == '\0' || strcmp(host, "?") == 0)
			host = fallback_host;
		idx = cluster_map_add(map, host, (int)node->element[1]->integer);
		for (s = start; s <= end; s++)
			map->slot[s] = (short)idx;
	}
	return (0);

bad:
	cluster_map_release(map);
	return (-1);
}

void
cluster_map_release(struct cluster_map *map)
{
	free(map->nodes);
	map->nodes = NULL;
	map->nnodes = 0;
	memset(map->slot, 0xff, sizeof map->slot);
}

const struct cluster_node *
cluster_map_node(const struct cluster_map *map, unsigned slot)
{
	if (slot >= CLUSTER_SLOTS || map->slot[slot] < 0 ||
	    (unsigned)map->slot[slot] >= map->nnodes)
		return (NULL);
	return (&map->nodes[map->slot[slot]]);
}

int
cluster_redirect(const char *err, int *ask, unsigned *slot,
    struct cluster_node *node)
{
	const char	*p, *colon;
	char		*end;
	unsigned long	 s;
	long		 port;
	size_t		 hlen;

	if (strncmp(err, "MOVED ", 6) == 0)
		*ask = 0;
	else if (strncmp(err, "ASK ", 4) == 0)
		*ask = 1;
	else
		return (0);
	p = err + (*ask ? 4 : 6);
	s = strtoul(p, &end, 10);
	if (end == p || *end != ' ' || s >= CLUSTER_SLOTS)
		return (0);
	p = end + 1;
	/* host:port, the host maybe an IPv6 address: the last colon. */
	if ((colon = strrchr(p, ':')) == NULL)
		return (0);
	port = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || (*end != '\0' && *end != ' ') || port <= 0 ||
	    port > 65535)
		return (0);
	hlen = (size_t)(colon - p);
	if (hlen >= CLUSTER_HOST_MAX)
		return (0);
	memcpy(node->host, p, hlen);
	node->host[hlen] = '\0';
	node->port = (int)port;
	*slot = (unsigned)s;
	return (1);
}

char *
cluster_tag(const char *key, const char *queue)
{
	size_t	 qlen = strlen(queue);
	char	*out;

	if (strncmp(key, "q:", 2) == 0 && strncmp(key + 2, queue, qlen) == 0 &&
	    key[2 + qlen] == ':')
		xasprintf(&out, "q:{%s}%s", queue, key + 2 + qlen);
	else if (strncmp(key, "execq:", 6) == 0 && key[6] != '{')
		xasprintf(&out, "execq:{%s}:%s", queue, key + 6);
	else
		out = xstrdup(key);
	return (out);
}

int
cluster_info_enabled(const redisReply *r)
{
	return (r != NULL && r->type == REDIS_REPLY_STRING &&
	    strstr(r->str, "cluster_enabled:1") != NULL);
}
