/*
 * binstate.h - distcc's per-process state files, so that distccmon-text
 * and distccmon-gnome show boltcc's jobs.
 *
 * distcc writes $DISTCC_DIR/state/binstate_<pid>: its struct
 * dcc_task_state in the machine's native layout (size, magic "DIH\0",
 * pid, file and host names, slot, phase, and an unused pointer); the
 * monitors read every such file and drop those of dead processes.
 * boltcc writes the same record to its state dir ($BOLTCC_DIR, else
 * $DISTCC_DIR, else ~/.boltcc) when a job starts compiling, on a host
 * or here, and removes it when the job ends.
 */
#ifndef BC_BINSTATE_H
#define BC_BINSTATE_H

#include <stddef.h>
#include <sys/types.h>

enum bc_binstate_phase {	/* distcc's enum dcc_phase, in its order */
	BC_PHASE_STARTUP = 0,
	BC_PHASE_BLOCKED,
	BC_PHASE_CONNECT,
	BC_PHASE_CPP,
	BC_PHASE_SEND,
	BC_PHASE_COMPILE,
	BC_PHASE_RECEIVE,
	BC_PHASE_DONE,
};

#define BC_BINSTATE_MAGIC 0x44494800UL	/* "DIH\0" */

struct bc_binstate {		/* distcc's struct dcc_task_state */
	size_t struct_size;
	unsigned long magic;
	unsigned long cpid;
	char file[128];
	char host[128];
	int slot;
	int curr_phase;		/* an enum in distcc: int-sized */
	void *next;		/* unused in the file */
};

/* Write this process's record: file's base name, on host, in slot. */
int bc_binstate_note(const char *statedir, int phase, const char *file,
    const char *host, int slot);
/* Remove this process's record (no error if there is none). */
void bc_binstate_clear(const char *statedir);
/* Read one record file (a monitor's side): BC_OK, or an error naming
 * what is wrong with it. */
int bc_binstate_read(const char *path, struct bc_binstate *out, char *err);

#endif
