#ifndef EXECQ_NSROOT_H
#define EXECQ_NSROOT_H

/*
 * The root of the commands' mount namespace: a tmpfs holding only binds
 * of the read paths (the hidden paths and the unix sockets found in them
 * left out, per entry), a fresh /dev and /proc, empty read-only /tmp,
 * /var/tmp, /run and /dev/shm, the workspace at its own path and the tmp
 * root's tmpfs; every mount read-only but the workspace and the tmp root;
 * hidden paths inside the workspace masked. A unix socket of the host
 * outside those is in no command's world, whenever it is made. Run by the
 * namespace helper, in a mount namespace of its own made private.
 */

struct nsroot_config {
	const char		*workspace;	/* realpath'd */
	const char		*tmp_dir;	/* the tmp root's mount point */
	const char *const	*read_paths;	/* NULL-terminated; NULL */
	const char *const	*hidden;	/* ... never in the root; NULL */
};

/*
 * Builds it and enters it (pivot_root): 0 or -errno; *left_out: how many
 * paths were left out or masked.
 */
int	nsroot_build(const struct nsroot_config *, unsigned *left_out);

#endif
