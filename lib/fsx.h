/* fsx.h - crash-safe file output (temp file, fsync, rename, fsync directory)
 * that never follows a symbolic link on the way to what it writes or deletes. */
#ifndef DDT_FSX_H
#define DDT_FSX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * Every function here that creates, writes, renames or deletes reaches its
 * path one component at a time from "/" (or the current folder), with
 * openat(O_DIRECTORY | O_NOFOLLOW), and acts with *at() calls relative to the
 * folder it opened, on names opened with O_NOFOLLOW: a symbolic link on the
 * way is an error that names it ("...: a symbolic link where ddt expects its
 * own folder"), never followed, so a user who can write a shared runs/ cannot
 * send a root nightly's writes or deletions elsewhere. Paths given by the
 * operator are made canonical once (fsx_canonical) where they enter ddt, so
 * their own links (runs -> /shared/runs) are resolved before anyone else's
 * can matter.
 */

/* A file being written under a temporary name beside its final path. Readers
 * never see it: temporary names start with '.' and end in ".tmp-<pid>". */
struct fsx_file {
	FILE *fp;         /* write through this */
	char *final_path; /* owned, for messages */
	char *name;       /* owned: the final name in dirfd */
	char *tmp_name;   /* owned: the temporary's name in dirfd */
	int dirfd;        /* the folder, opened without following links */
};

/* Opens a temporary file beside path. Returns 0 or DDT_EIO/DDT_ENOMEM (a
 * symbolic link on the way: DDT_EIO naming it). */
int fsx_open(struct fsx_file *f, const char *path);

/* Flushes, fsyncs, closes and renames the file into place, then fsyncs the
 * folder. A symbolic link at the final name is an error naming it. On any
 * failure the temporary file is removed, the final path is untouched, and
 * DDT_EIO is returned. Frees f's strings and folder in every case. */
int fsx_commit(struct fsx_file *f);

/* Closes and removes the temporary file; the final path is untouched. */
void fsx_abort(struct fsx_file *f);

/* Writes len bytes to path atomically. Returns 0 or an error code. */
int fsx_write_all(const char *path, const void *data, size_t len);

/* open(2) for a file ddt writes in place (a lock, a claim, a log): the
 * folders of path and the file itself are reached without following a
 * link (O_NOFOLLOW is added to flags). Returns the descriptor (close-on-exec),
 * or -1 with the error set (DDT_EIO naming the path; EEXIST under O_EXCL is
 * DDT_EIO too, with errno left EEXIST for the caller). */
int fsx_open_fd(const char *path, int flags, mode_t mode);

/* Opens folder path without following a link on the way or at it (for
 * *at() calls); -1 with the error set. */
int fsx_dir_fd(const char *path);

/* Reads a whole regular file (at most cap bytes, else DDT_EINPUT; anything but
 * a regular file: DDT_EINPUT) into a NUL-terminated malloc'd buffer that the
 * caller frees. */
int fsx_read_all(const char *path, size_t cap, char **data, size_t *len);

/* FNV-1a (64 bits) of n bytes folded into h (start from FSX_HASH_SEED): a
 * fingerprint of inputs, to tell whether they changed (not cryptographic). */
#define FSX_HASH_SEED 14695981039346656037ull
uint64_t fsx_hash(uint64_t h, const void *p, size_t n);
/* h with the bytes of the file at path folded in (up to cap bytes); *h is
 * unchanged when it cannot be read. Returns 0 or fsx_read_all's error. */
int fsx_hash_file(uint64_t *h, const char *path, size_t cap);

/* mkdir -p without following a link: a symbolic link where a folder should
 * be is an error naming it. Returns 0 or DDT_EIO. */
int fsx_mkdir_p(const char *path);

/* Creates a temporary folder beside final_dir for a folder that must appear
 * whole; *tmp_dir (malloc'd) receives its path. */
int fsx_dir_begin(const char *final_dir, char **tmp_dir);

/* fsyncs every file in tmp_dir, renames it to final_dir (which must not
 * exist: never replaced) and fsyncs the parent. On failure tmp_dir is
 * removed. Frees nothing. */
int fsx_dir_commit(const char *tmp_dir, const char *final_dir);

/* fsx_dir_commit, except when something (anything: a folder, a file, a
 * dangling link) took final_dir's name before the rename: then DDT_ETAKEN,
 * with tmp_dir left whole, so that the caller can put it in place under
 * another name. */
int fsx_dir_place(const char *tmp_dir, const char *final_dir);

/* How fsx_rename moves: replace what is at `to`, never replace, or exchange
 * the two (both must exist). */
enum fsx_rename_how { FSX_REPLACE, FSX_NOREPLACE, FSX_EXCHANGE };

/* Renames from to `to` (folders reached without following links), then
 * fsyncs both folders. Returns 0, or DDT_EIO naming the paths (EEXIST /
 * ENOTEMPTY left in errno for FSX_NOREPLACE). */
int fsx_rename(const char *from, const char *to, enum fsx_rename_how how);

/* Points the symbolic link path at target: a new link under a temporary
 * name renamed over the old one. Returns 0 or DDT_EIO. */
int fsx_symlink(const char *target, const char *path);

/* fsyncs a file or folder (reached without following links). */
int fsx_fsync_path(const char *path);

/* Removes a file or folder tree without following a link: a link in it is
 * removed, never what it points at. Returns 0 or DDT_EIO (the first failure;
 * the rest is still tried). */
int fsx_rm_rf(const char *path);

/* The same for the entry `name` of the folder dirfd. */
int fsx_rm_rf_at(int dirfd, const char *name);

/* lstat(2) of path, every folder on the way reached without following a
 * link. Returns 0, or -1 with errno set (and no message). */
struct stat;
int fsx_lstat(const char *path, struct stat *st);

/* What is at path, without following a link: one of these (FSX_NONE when
 * nothing is, or the folders on the way cannot be reached). */
enum fsx_kind { FSX_NONE, FSX_FILE, FSX_DIR, FSX_LINK, FSX_OTHER };
enum fsx_kind fsx_kind(const char *path);

/* path with the links of its existing folders resolved (realpath of the part
 * that exists, the rest appended) into out. Returns 0 or DDT_EINPUT (a path
 * longer than len) / DDT_EIO. */
int fsx_canonical(const char *path, char *out, size_t len);

/* True for names ddt's writers use while a file or folder is incomplete, and
 * for every other dot-name: readers skip them. */
int fsx_is_temp_name(const char *name);

/* True when name, taken from input, is safe to join to a folder: one path
 * component of 1 to 255 bytes, no '/', not starting with '.' (so never "..",
 * "." or a temporary name). */
int fsx_name_ok(const char *name);

/* True when path exists (file or folder). */
int fsx_exists(const char *path);

/* malloc'd "a/b"; NULL on allocation failure. */
char *fsx_join(const char *a, const char *b);

/* ---------------------------------------------------------------- trust
 *
 * The one trust rule, in the spirit of sshd's StrictModes and logrotate's
 * refusal of insecure folders: a file or folder is trusted only when it is
 * owned by the running user (the effective uid) or by root, and no one but
 * its owner may write it (no group or other write bit), and it is no
 * symbolic link. What is not trusted is read as data at most, never lets
 * ddt decide its lock, its index, reports/latest or retention, and root
 * never repairs or renders it. */

/* 1 when st (an lstat) is trusted; 0 otherwise, with why ("owned by uid
 * 1000", "writable by group or others (mode 0775)", "a symbolic link") in
 * why[len] when why is not NULL. */
int fsx_trusted(const struct stat *st, char *why, size_t len);

/* The same for the entry name of folder dirfd (not followed): 1 trusted,
 * 0 not (why filled; "missing" when it is not there). */
int fsx_trusted_at(int dirfd, const char *name, char *why, size_t len);

/* The same for path, reached without following a link (fsx_lstat). */
int fsx_trusted_path(const char *path, char *why, size_t len);

/* Opens rel (a relative path) beneath the folder dirfd: no symbolic link is
 * followed at any step and nothing outside dirfd is reached ("..", an
 * absolute path), with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where
 * the kernel has it, one openat(O_NOFOLLOW) a component otherwise. flags
 * gain O_NOFOLLOW and O_CLOEXEC. The descriptor, or -1 with errno set (ELOOP
 * for a link, EXDEV for a way out). No message is set. With DDT_NO_OPENAT2
 * set in the environment the walk is used (tests). */
int fsx_open_beneath(int dirfd, const char *rel, int flags);

/* Registers dir (canonical) as a folder other users may write (runs/,
 * reports/): from then on every file fsx_read_all reads under it is opened
 * beneath it with fsx_open_beneath, O_NONBLOCK, and checked to be a regular
 * file before a byte is read, so no link planted there is followed and no
 * FIFO or device stalls a reader. At most 8 folders; a ninth is ignored. */
void fsx_confine_reads(const char *dir);

/* Opens path for appending (a log ddt keeps beside others' files): its
 * folder made canonical (the operator's own links resolved, as for --runs),
 * the file itself reached without following a link, created 0644 when
 * missing, opened O_NONBLOCK, and refused (DDT_EIO naming why, nothing
 * written) unless it is a regular file with one name that passes
 * fsx_trusted. The descriptor, or -1 with the error set. */
int fsx_open_append(const char *path);

#endif
