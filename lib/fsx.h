/* fsx.h - crash-safe file output: temp file, fsync, rename, fsync directory. */
#ifndef DDT_FSX_H
#define DDT_FSX_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A file being written under a temporary name beside its final path. Readers
 * never see it: temporary names start with '.' and end in ".tmp-<pid>". */
struct fsx_file {
	FILE *fp;         /* write through this */
	char *final_path; /* owned */
	char *tmp_path;   /* owned */
};

/* Opens a temporary file beside path. Returns 0 or DDT_EIO/DDT_ENOMEM. */
int fsx_open(struct fsx_file *f, const char *path);

/* Flushes, fsyncs, closes and renames the file into place, then fsyncs the
 * directory. On any failure the temporary file is removed, the final path is
 * untouched, and DDT_EIO is returned. Frees f's strings in every case. */
int fsx_commit(struct fsx_file *f);

/* Closes and removes the temporary file; the final path is untouched. */
void fsx_abort(struct fsx_file *f);

/* Writes len bytes to path atomically. Returns 0 or an error code. */
int fsx_write_all(const char *path, const void *data, size_t len);

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

/* mkdir -p. Returns 0 or DDT_EIO. */
int fsx_mkdir_p(const char *path);

/* Creates a temporary folder beside final_dir for a folder that must appear
 * whole; *tmp_dir (malloc'd) receives its path. */
int fsx_dir_begin(const char *final_dir, char **tmp_dir);

/* fsyncs every file in tmp_dir, renames it to final_dir (which must not exist)
 * and fsyncs the parent. On failure tmp_dir is removed. Frees nothing. */
int fsx_dir_commit(const char *tmp_dir, const char *final_dir);

/* Removes a folder tree (best effort). Returns 0 or DDT_EIO. */
int fsx_rm_rf(const char *path);

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

#endif
