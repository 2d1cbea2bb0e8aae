/*
 * remote.c - send one job to one host and read the reply.
 *
 * The socket is never half-closed after the request: a distcc 3.4 daemon
 * takes shutdown(SHUT_WR) as "client gone" and kills the job (spec 12.3).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/io.h"
#include "common/limits.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "client/hostsel.h"
#include "client/remote.h"
#include "client/ssh.h"

const char *
bc_remote_reason(int r)
{
	switch (r) {
	case BC_ERR_TIMEOUT:
		return "timeout";
	case BC_ERR_EOF:
		return "eof";
	case BC_ERR_PROTO:
	case BC_ERR_TRUNCATED:
	case BC_ERR_CORRUPT:
	case BC_ERR_LIMIT:
		return "protocol";
	case BC_ERR_DENIED:
		return "refused";
	case BC_ERR_NOTSUP:
		return "unsupported";
	default:
		return "io";
	}
}

const char *
bc_remote_fault_counter(int r, const char *why)
{
	if (why != NULL && strcmp(why, "connect-timeout") == 0)
		return "fault_timeouts";
	if (why != NULL && (strcmp(why, "connect") == 0 ||
	    strcmp(why, "probe-connect") == 0))
		return r == BC_ERR_TIMEOUT ? "fault_timeouts" : "fault_connect";
	switch (r) {
	case BC_ERR_TIMEOUT:
		return "fault_timeouts";
	case BC_ERR_EOF:
	case BC_ERR_TRUNCATED:
	case BC_ERR_IO:
		return "fault_conn_reset";
	default:
		return NULL;
	}
}

/* $DIR/state/<what>_<host>: what the client remembers of a host
 * (beat: it sent heartbeats within the hour; probe: what it is). */
static int
host_state_path(const char *statedir, const char *what,
    const struct bc_host *h, char *out, size_t outlen)
{
	char key[512];
	int n;

	if (statedir == NULL ||
	    bc_hostsel_host_key(h, key, sizeof(key)) != BC_OK)
		return BC_ERR_LIMIT;
	n = snprintf(out, outlen, "%s/%s_%s", statedir, what, key);
	return n >= 0 && (size_t)n < outlen ? BC_OK : BC_ERR_LIMIT;
}

int
bc_remote_beat_known(const char *statedir, const struct bc_host *h)
{
	char path[4096];
	struct stat st;
	time_t now = time(NULL);

	/* A host declared ,bolt is a boltccd, and every boltccd sends
	 * heartbeats: a hung one costs its first job BC_BEAT_TIMEOUT_MS,
	 * not DISTCC_IO_TIMEOUT. */
	if (h->bolt == BC_BOLT_YES)
		return 1;
	if (host_state_path(statedir, "beat", h, path, sizeof(path)) != BC_OK ||
	    stat(path, &st) != 0 || st.st_mtime > now + 60 ||
	    st.st_mtime + BC_PROBE_TTL_SEC < now)
		return 0;
	return st.st_mtime + BC_PROBE_TTL_SEC / 2 < now ? 2 : 1;
}

void
bc_remote_beat_remember(const char *statedir, const struct bc_host *h)
{
	char path[4096];

	if (host_state_path(statedir, "beat", h, path, sizeof(path)) == BC_OK &&
	    bc_write_file_atomic(path, "beat\n", 5, 0644, NULL) != BC_OK)
		bc_debug("cannot write %s", path);
}

int
bc_remote_connect(const struct bc_host *h, int connect_timeout_ms, int *fd,
    const char **why, char *err)
{
	int r;

	/* TCP, or a channel of an SSH session (client/ssh.h) */
	r = bc_ssh_connect_host(h, connect_timeout_ms, fd, err);
	if (r != BC_OK)
		*why = r == BC_ERR_TIMEOUT ? "connect-timeout" : "connect";
	return r;
}

int
bc_remote_compile(const struct bc_remote_job *job, struct bc_reply *rep,
    struct bc_remote_counts *counts, const char **why, char *err)
{
	struct bc_request req;
	struct bc_buf out;
	struct bc_io io;
	int fd = -1, r, beat = 0;

	*why = "io";
	counts->sent = counts->received = 0;
	r = bc_remote_connect(job->host, job->connect_timeout_ms, &fd, why,
	    err);
	if (r != BC_OK)
		return r;

	bc_request_init(&req);
	req.proto = job->proto;
	req.kind = BC_RQST_COMPILE;
	req.flags = job->flags;
	if (job->proto == BC_PROTO_BOLT)
		req.flags |= BC_FLAG_HEARTBEAT;
	if (job->proto == BC_PROTO_BOLT && job->cwd != NULL)
		req.cwd = xstrdup(job->cwd);
	if (job->proto == BC_PROTO_BOLT && job->identity != NULL)
		req.identity = xstrdup(job->identity);
	bc_strv_copy(&req.argv, job->argv);

	bc_buf_init(&out, BC_BUF_CEILING);
	r = bc_proto_write_request_head(&out, &req, err);
	if (r == BC_OK)
		r = bc_proto_write_doti(&out, job->proto, job->doti,
		    job->doti_len, err);
	bc_request_free(&req);
	if (r != BC_OK) {
		/* Our own encoding failed: not the host's fault. */
		bc_buf_free(&out);
		close(fd);
		*why = "encode";
		return r;
	}

	bc_io_init(&io, fd, fd, job->io_timeout_ms);
	if (job->proto == BC_PROTO_BOLT)
		io.beat_timeout_ms = job->io_timeout_ms > 0 &&
		    job->io_timeout_ms < BC_BEAT_TIMEOUT_MS ?
		    job->io_timeout_ms : BC_BEAT_TIMEOUT_MS;
	r = bc_io_write_buf(&io, &out, err);
	bc_buf_free(&out);
	if (r == BC_OK && io.beat_timeout_ms > 0 &&
	    (beat = bc_remote_beat_known(job->statedir, job->host)) != 0)
		io.io_timeout_ms = io.beat_timeout_ms;
	if (r == BC_OK)
		r = bc_proto_read_reply(&io, job->proto, BC_RQST_COMPILE, rep,
		    err);
	if (rep->beats > 0 && beat != 1)
		bc_remote_beat_remember(job->statedir, job->host);
	counts->sent = io.bytes_out;
	counts->received = io.bytes_in;
	close(fd);
	if (r != BC_OK) {
		*why = bc_remote_reason(r);
		if (r == BC_ERR_DENIED && rep->errmsg != NULL) {
			char esc[256];

			bc_log_escape(rep->errmsg, strlen(rep->errmsg), esc,
			    sizeof(esc));
			bc_seterr(err, r, "daemon refused the job: %s", esc);
		}
		return r;
	}
	return BC_OK;
}

int
bc_remote_probe(const struct bc_host *h, int connect_timeout_ms,
    int io_timeout_ms, int *is_bolt, char *err)
{
	struct bc_request req;
	struct bc_reply rep;
	struct bc_buf out;
	struct bc_io io;
	char perr[BC_ERRLEN];
	int fd = -1, r;

	*is_bolt = 0;
	if (h->kind != BC_HOST_TCP && h->kind != BC_HOST_SSH)
		return BC_OK;
	r = bc_ssh_connect_host(h, connect_timeout_ms, &fd, err);
	if (r != BC_OK)
		return r;
	bc_request_init(&req);
	req.proto = BC_PROTO_BOLT;
	req.kind = BC_RQST_HELLO;
	bc_buf_init(&out, BC_MAX_MSG);
	r = bc_proto_write_request_head(&out, &req, err);
	bc_request_free(&req);
	if (r != BC_OK) {
		bc_buf_free(&out);
		close(fd);
		return r;
	}
	/* a boltccd answers HELLO at once: silence is a hung host */
	if (io_timeout_ms <= 0 || io_timeout_ms > BC_PROBE_IO_TIMEOUT_MS)
		io_timeout_ms = BC_PROBE_IO_TIMEOUT_MS;
	bc_io_init(&io, fd, fd, io_timeout_ms);
	bc_reply_init(&rep);
	r = bc_io_write_buf(&io, &out, perr);
	bc_buf_free(&out);
	if (r == BC_OK)
		r = bc_proto_read_reply(&io, BC_PROTO_BOLT, BC_RQST_HELLO, &rep,
		    perr);
	close(fd);
	if (r == BC_ERR_TIMEOUT) {
		/* A stock distccd closes at once; silence is a hung or
		 * overloaded host, not an answer worth remembering. */
		bc_reply_free(&rep);
		return bc_seterr(err, r, "probe: %s", perr);
	}
	if (r == BC_OK || (r == BC_ERR_DENIED && rep.errmsg != NULL)) {
		/* A refusal in BOLT framing still proves a boltccd. */
		*is_bolt = 1;
		bc_debug("probe %s: boltccd (%s)", h->spec,
		    rep.info != NULL ? "hello answered" : "refused");
		/* ssh: wait until the remote command has ended (it has seen
		 * our close), so the helper's session is free again for the
		 * job that follows instead of a second session and login */
		(void)bc_ssh_explain(h, perr);
	} else if (bc_ssh_explain(h, perr) == 2) {
		/* ssh: the remote command is missing, not a distccd */
		bc_reply_free(&rep);
		return bc_seterr(err, BC_ERR_NOENT, "%s", perr);
	} else {
		bc_debug("probe %s: not boltccd (%s)", h->spec, perr);
	}
	bc_reply_free(&rep);
	return BC_OK;
}

int
bc_remote_probe_cached(const char *statedir, const struct bc_host *h)
{
	char path[4096];
	struct bc_buf b;
	struct stat st;
	int ans = -1;

	if (host_state_path(statedir, "probe", h, path, sizeof(path)) != BC_OK)
		return -1;
	if (stat(path, &st) != 0)
		return -1;
	if (st.st_mtime + BC_PROBE_TTL_SEC < time(NULL) ||
	    st.st_mtime > time(NULL) + 60)
		return -1;
	bc_buf_init(&b, 64);
	if (bc_read_file(path, 64, &b, NULL) == BC_OK) {
		size_t n = bc_buf_len(&b);
		const uint8_t *p = bc_buf_data(&b);

		if (n >= 4 && memcmp(p, "bolt", 4) == 0)
			ans = 1;
		else if (n >= 6 && memcmp(p, "distcc", 6) == 0)
			ans = 0;
	}
	bc_buf_free(&b);
	return ans;
}

void
bc_remote_probe_remember(const char *statedir, const struct bc_host *h,
    int is_bolt)
{
	char path[4096];
	const char *text = is_bolt ? "bolt\n" : "distcc\n";

	if (host_state_path(statedir, "probe", h, path, sizeof(path)) != BC_OK)
		return;
	if (bc_write_file_atomic(path, text, strlen(text), 0644, NULL) != BC_OK)
		bc_debug("cannot write %s", path);
}
