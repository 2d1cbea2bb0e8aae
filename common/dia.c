/*
 * dia.c - rewrite the blobs of clang's serialized diagnostics (dia.h).
 *
 * One pass: a bit reader over a read-only bc_buf view of the input, a bit
 * writer appending to the caller's bc_buf.  Every field (abbreviation id,
 * block header field, operand) is read with its encoding and written back
 * with the same encoding and, for a VBR, the same number of chunks, so a
 * field that does not change keeps its bits even if it was not written
 * minimally.  Each block gets a placeholder length word, patched at its
 * END_BLOCK.  The scalar operand before a blob is held back until the
 * blob has been replaced, so that it can take the new length.
 *
 * The LLVM bitstream, as far as it matters here: bits are taken LSB first
 * from little-endian 32-bit words; the abbreviation id width is 2 outside
 * any block; id 0 END_BLOCK (align to 32 bits), 1 ENTER_SUBBLOCK (block
 * id vbr8, the block's id width vbr4, align, the block's length in 32-bit
 * words as a 32-bit field), 2 DEFINE_ABBREV (operand count vbr5; per
 * operand a literal bit, then the value vbr8, or the encoding fixed3 with
 * a vbr5 width for Fixed and VBR), 3 UNABBREV_RECORD (code, operand count
 * and operands, all vbr6); ids from 4 name abbreviated records: first the
 * abbreviations BLOCKINFO gave the block's id (SETBID picks the id the
 * DEFINE_ABBREVs inside BLOCKINFO are for), then the block's own.  A blob
 * is a vbr6 length, alignment, the bytes, alignment; an array is a vbr6
 * length then the elements in the encoding of the operand after it.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dia.h"
#include "err.h"
#include "limits.h"

#define DIA_MAGIC	"DIAG"
#define DIA_MAGIC_LEN	4
#define DIA_TOP_WIDTH	2	/* abbreviation id width outside blocks */
#define DIA_BLOCKINFO	0	/* the BLOCKINFO block's id */
#define DIA_SETBID	1	/* BLOCKINFO record: block id described */

/* Abbreviation ids with a fixed meaning. */
enum {
	ID_END_BLOCK = 0,
	ID_ENTER_SUBBLOCK = 1,
	ID_DEFINE_ABBREV = 2,
	ID_UNABBREV_RECORD = 3,
	ID_FIRST_ABBREV = 4
};

/* Operand encodings, as DEFINE_ABBREV writes them; 0 is ours. */
enum {
	ENC_LITERAL = 0,
	ENC_FIXED = 1,
	ENC_VBR = 2,
	ENC_ARRAY = 3,
	ENC_CHAR6 = 4,
	ENC_BLOB = 5
};

/* A field as read, written back alike unless its value changes. */
struct field {
	uint64_t v;
	unsigned enc;		/* ENC_FIXED or ENC_VBR */
	unsigned width;		/* bits, or bits per VBR chunk */
	unsigned chunks;	/* VBR: chunks as read */
};

struct op {
	uint64_t lit;		/* ENC_LITERAL: the value */
	unsigned enc;
	unsigned width;		/* ENC_FIXED, ENC_VBR */
};

struct abbrev {
	unsigned nops;
	struct op op[BC_MAX_DIA_ABBREV_OPS];
};

/* The abbreviations BLOCKINFO gave one block id (indexes in abbrev[]). */
struct info {
	uint64_t bid;
	unsigned n;
	uint8_t abbrev[BC_MAX_DIA_ABBREVS];
};

struct scope {
	uint64_t bid;
	unsigned width;		/* abbreviation id width */
	size_t end;		/* input bit where the block ends */
	size_t lenat;		/* output byte offset of its length word */
	int info;		/* its info[] entry, or -1 */
	unsigned ninherit;	/* abbreviations of that entry it sees */
	unsigned nlocal;	/* its own DEFINE_ABBREVs */
	uint8_t local[BC_MAX_DIA_ABBREVS];
	int blockinfo;		/* a BLOCKINFO block */
	int setbid;		/* BLOCKINFO: a SETBID was read ... */
	uint64_t curbid;	/* ... naming this block id */
};

struct reader {
	struct bc_buf in;	/* view of the input; cursor on the byte
				 * after cur */
	size_t pos;		/* bits consumed */
	uint8_t cur;		/* the byte being consumed */
	unsigned left;		/* its bits not yet consumed */
};

struct writer {
	struct bc_buf *out;
	size_t nbits;		/* bits written since the start */
	uint64_t acc;		/* bits not appended yet (< 8 between) */
	unsigned nacc;
	int r;			/* first append error, sticky */
};

struct dia {
	struct reader rd;
	struct writer wr;
	bc_dia_blob_fn fn;
	void *ctx;
	char *err;
	struct bc_buf blob;	/* one blob's replacement */
	unsigned nabbrev;
	unsigned ninfo;
	unsigned depth;		/* open blocks; scope[0]: top level */
	struct abbrev abbrev[BC_MAX_DIA_ABBREVS];
	struct info info[BC_MAX_DIA_ABBREVS];
	struct scope scope[BC_MAX_DIA_DEPTH + 1];
};

/* --- errors ------------------------------------------------------------- */

static size_t
at_byte(const struct dia *d)
{
	return d->rd.pos / 8;
}

static int
corrupt(struct dia *d, const char *what)
{
	return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: %s at byte %zu",
	    what, at_byte(d));
}

static int
past_end(struct dia *d, const char *what)
{
	return bc_seterr(d->err, BC_ERR_CORRUPT,
	    "corrupt .dia: %s at byte %zu runs past the end of %s", what,
	    at_byte(d), d->depth == 0 ? "the file" : "its block");
}

/* --- bit reader --------------------------------------------------------- */

/* Bits left in the current block (or file). */
static size_t
rd_room(const struct dia *d)
{
	return d->scope[d->depth].end - d->rd.pos;
}

/* Read n <= 64 bits, LSB first. */
static int
rd_bits(struct dia *d, unsigned n, uint64_t *v, const char *what)
{
	struct reader *rd = &d->rd;
	uint64_t val = 0;
	unsigned got = 0, k;

	if (n > rd_room(d))
		return past_end(d, what);
	while (got < n) {
		if (rd->left == 0) {
			if (bc_buf_get_u8(&rd->in, &rd->cur) != BC_OK)
				return bc_seterr(d->err, BC_ERR_INTERNAL,
				    ".dia reader past its input");
			rd->left = 8;
		}
		k = n - got < rd->left ? n - got : rd->left;
		val |= (uint64_t)((rd->cur >> (8 - rd->left)) &
		    ((1u << k) - 1)) << got;
		rd->left -= k;
		got += k;
	}
	rd->pos += n;
	*v = val;
	return BC_OK;
}

static int
rd_fixed(struct dia *d, unsigned width, struct field *f, const char *what)
{
	f->enc = ENC_FIXED;
	f->width = width;
	f->chunks = 1;
	return rd_bits(d, width, &f->v, what);
}

/* A VBR field of 2 <= width <= 32; its value must fit 64 bits. */
static int
rd_vbr(struct dia *d, unsigned width, struct field *f, const char *what)
{
	uint64_t chunk, payload;
	unsigned shift = 0;
	int r;

	f->enc = ENC_VBR;
	f->width = width;
	f->chunks = 0;
	f->v = 0;
	for (;;) {
		if ((r = rd_bits(d, width, &chunk, what)) != BC_OK)
			return r;
		payload = chunk & (((uint64_t)1 << (width - 1)) - 1);
		if (shift > 0 && (payload >> (64 - shift)) != 0)
			return corrupt(d, "VBR value wider than 64 bits");
		f->v |= payload << shift;
		f->chunks++;
		if ((chunk >> (width - 1)) == 0)
			return BC_OK;
		shift += width - 1;
		if (shift >= 64)
			return corrupt(d, "VBR value wider than 64 bits");
	}
}

/* Skip to the next 32-bit boundary; the padding must be zero. */
static int
rd_align(struct dia *d, const char *what)
{
	unsigned pad = (unsigned)((32 - d->rd.pos % 32) % 32);
	uint64_t v;
	int r;

	if (pad == 0)
		return BC_OK;
	if ((r = rd_bits(d, pad, &v, what)) != BC_OK)
		return r;
	if (v != 0)
		return corrupt(d, "nonzero padding");
	return BC_OK;
}

/* A scalar operand of an abbreviated record. */
static int
rd_op(struct dia *d, const struct op *op, struct field *f)
{
	if (op->enc == ENC_VBR)
		return rd_vbr(d, op->width, f, "record operand");
	return rd_fixed(d, op->enc == ENC_CHAR6 ? 6 : op->width, f,
	    "record operand");
}

/* --- bit writer --------------------------------------------------------- */

static void
wr_flush(struct writer *w)
{
	uint8_t b[8];
	size_t n = 0;

	while (w->nacc >= 8) {
		b[n++] = (uint8_t)w->acc;
		w->acc >>= 8;
		w->nacc -= 8;
	}
	if (n > 0 && w->r == BC_OK)
		w->r = bc_buf_put(w->out, b, n);
}

/* Append n <= 64 bits, LSB first. */
static void
wr_bits(struct writer *w, uint64_t v, unsigned n)
{
	unsigned k;

	while (n > 0) {
		k = n < 32 ? n : 32;
		w->acc |= (v & (((uint64_t)1 << k) - 1)) << w->nacc;
		w->nacc += k;
		w->nbits += k;
		v >>= k;
		n -= k;
		wr_flush(w);
	}
}

/* Chunks LLVM writes for v as a VBR of this width (minimal). */
static unsigned
vbr_chunks(uint64_t v, unsigned width)
{
	unsigned n = 1, shift = width - 1;

	while (shift < 64 && (v >> shift) != 0) {
		n++;
		shift += width - 1;
	}
	return n;
}

static void
wr_field(struct writer *w, const struct field *f)
{
	uint64_t mask, payload;
	unsigned i, shift = 0;

	if (f->enc == ENC_FIXED) {
		wr_bits(w, f->v, f->width);
		return;
	}
	mask = ((uint64_t)1 << (f->width - 1)) - 1;
	for (i = 0; i < f->chunks; i++) {
		payload = shift < 64 ? (f->v >> shift) & mask : 0;
		if (i + 1 < f->chunks)
			payload |= mask + 1;	/* continuation bit */
		wr_bits(w, payload, f->width);
		shift += f->width - 1;
	}
}

static void
wr_align(struct writer *w)
{
	wr_bits(w, 0, (unsigned)((32 - w->nbits % 32) % 32));
}

/* Append bytes at a byte boundary. */
static void
wr_bytes(struct writer *w, const void *p, size_t n)
{
	if (w->nacc != 0 && w->r == BC_OK)
		w->r = BC_ERR_INTERNAL;
	if (w->r == BC_OK)
		w->r = bc_buf_put(w->out, p, n);
	w->nbits += 8 * n;
}

/* Store v as the little-endian word at byte offset at of the output. */
static void
wr_patch32(struct writer *w, size_t at, uint32_t v)
{
	uint8_t x[4];
	int i;

	if (w->r != BC_OK)
		return;
	for (i = 0; i < 4; i++)
		x[i] = (uint8_t)(v >> (8 * i));
	if (bc_buf_patch(w->out, at, x, sizeof(x)) != BC_OK)
		w->r = BC_ERR_INTERNAL;
}

static int
wr_check(struct dia *d)
{
	if (d->wr.r == BC_OK)
		return BC_OK;
	if (d->wr.r == BC_ERR_LIMIT)
		return bc_seterr(d->err, BC_ERR_LIMIT,
		    "rewritten .dia larger than its buffer's %zu bytes",
		    bc_buf_max(d->wr.out));
	return bc_seterr(d->err, d->wr.r, "rewriting .dia: %s",
	    bc_strerror(d->wr.r));
}

/* --- abbreviations ------------------------------------------------------ */

/* The abbreviation an id names in the current block, or NULL. */
static const struct abbrev *
abbrev_for(const struct dia *d, uint64_t id)
{
	const struct scope *s = &d->scope[d->depth];
	uint64_t j = id - ID_FIRST_ABBREV;

	if (j < s->ninherit)
		return &d->abbrev[d->info[s->info].abbrev[j]];
	j -= s->ninherit;
	if (j < s->nlocal)
		return &d->abbrev[s->local[j]];
	return NULL;
}

/* LLVM's rules for an abbreviation's shape. */
static int
abbrev_check(struct dia *d, const struct abbrev *a)
{
	const struct op *e;
	unsigned i;

	if (a->op[0].enc == ENC_ARRAY || a->op[0].enc == ENC_BLOB)
		return corrupt(d,
		    "abbreviation starts with an array or a blob");
	for (i = 0; i < a->nops; i++) {
		if (a->op[i].enc != ENC_ARRAY)
			continue;
		if (i + 2 != a->nops)
			return corrupt(d, "abbreviation with an array that is "
			    "not its second to last operand");
		e = &a->op[i + 1];
		if (e->enc == ENC_ARRAY)
			return corrupt(d,
			    "abbreviation with an array of arrays");
		if (e->enc == ENC_BLOB)
			return corrupt(d,
			    "abbreviation with an array of blobs");
		if (e->enc == ENC_LITERAL || (e->enc == ENC_FIXED &&
		    e->width == 0))
			return corrupt(d, "abbreviation with an array of "
			    "literals or of zero-width elements");
		break;
	}
	return BC_OK;
}

/* Copy one DEFINE_ABBREV operand, decoding it into op. */
static int
define_op(struct dia *d, struct op *op)
{
	struct field f;
	int r;

	if ((r = rd_fixed(d, 1, &f, "abbreviation operand")) != BC_OK)
		return r;
	wr_field(&d->wr, &f);
	if (f.v == 1) {
		if ((r = rd_vbr(d, 8, &f, "abbreviation literal")) != BC_OK)
			return r;
		wr_field(&d->wr, &f);
		op->enc = ENC_LITERAL;
		op->lit = f.v;
		return BC_OK;
	}
	if ((r = rd_fixed(d, 3, &f, "abbreviation operand")) != BC_OK)
		return r;
	wr_field(&d->wr, &f);
	if (f.v < ENC_FIXED || f.v > ENC_BLOB)
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: "
		    "unknown operand encoding %u at byte %zu", (unsigned)f.v,
		    at_byte(d));
	op->enc = (unsigned)f.v;
	if (op->enc != ENC_FIXED && op->enc != ENC_VBR)
		return BC_OK;
	if ((r = rd_vbr(d, 5, &f, "abbreviation operand width")) != BC_OK)
		return r;
	wr_field(&d->wr, &f);
	if (op->enc == ENC_FIXED && f.v > 64)
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: Fixed "
		    "width %llu over 64 at byte %zu", (unsigned long long)f.v,
		    at_byte(d));
	if (op->enc == ENC_VBR && (f.v < 2 || f.v > 32))
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: VBR "
		    "width %llu not in 2..32 at byte %zu",
		    (unsigned long long)f.v, at_byte(d));
	op->width = (unsigned)f.v;
	return BC_OK;
}

/* The info[] entry of a block id, made if needed. */
static struct info *
info_for(struct dia *d, uint64_t bid)
{
	unsigned i;

	for (i = 0; i < d->ninfo; i++)
		if (d->info[i].bid == bid)
			return &d->info[i];
	d->info[d->ninfo].bid = bid;	/* ninfo <= nabbrev < the limit */
	d->info[d->ninfo].n = 0;
	return &d->info[d->ninfo++];
}

/* Keep a new abbreviation for this block or, in BLOCKINFO, its SETBID's. */
static int
define_keep(struct dia *d, const struct abbrev *a)
{
	struct scope *s = &d->scope[d->depth];
	struct info *in;

	if (d->nabbrev == BC_MAX_DIA_ABBREVS)
		return bc_seterr(d->err, BC_ERR_LIMIT, ".dia defines more "
		    "than %d abbreviations (BC_MAX_DIA_ABBREVS)",
		    BC_MAX_DIA_ABBREVS);
	if (s->blockinfo && !s->setbid)
		return corrupt(d, "DEFINE_ABBREV in BLOCKINFO before SETBID");
	d->abbrev[d->nabbrev] = *a;
	if (s->blockinfo) {
		in = info_for(d, s->curbid);
		in->abbrev[in->n++] = (uint8_t)d->nabbrev;
	} else
		s->local[s->nlocal++] = (uint8_t)d->nabbrev;
	d->nabbrev++;
	return BC_OK;
}

/* --- elements ----------------------------------------------------------- */

static int
el_define(struct dia *d, const struct field *id)
{
	struct abbrev a;
	struct field n;
	unsigned i;
	int r;

	wr_field(&d->wr, id);
	if ((r = rd_vbr(d, 5, &n, "abbreviation operand count")) != BC_OK)
		return r;
	wr_field(&d->wr, &n);
	if (n.v == 0)
		return corrupt(d, "abbreviation without operands");
	if (n.v > BC_MAX_DIA_ABBREV_OPS)
		return bc_seterr(d->err, BC_ERR_LIMIT, ".dia abbreviation of "
		    "%llu operands, more than %d (BC_MAX_DIA_ABBREV_OPS)",
		    (unsigned long long)n.v, BC_MAX_DIA_ABBREV_OPS);
	memset(&a, 0, sizeof(a));
	a.nops = (unsigned)n.v;
	for (i = 0; i < a.nops; i++)
		if ((r = define_op(d, &a.op[i])) != BC_OK)
			return r;
	if ((r = abbrev_check(d, &a)) != BC_OK)
		return r;
	return define_keep(d, &a);
}

static int
el_unabbrev(struct dia *d, const struct field *id)
{
	struct scope *s = &d->scope[d->depth];
	struct field code, n, f;
	uint64_t i;
	int r;

	wr_field(&d->wr, id);
	if ((r = rd_vbr(d, 6, &code, "record code")) != BC_OK ||
	    (r = rd_vbr(d, 6, &n, "record operand count")) != BC_OK)
		return r;
	wr_field(&d->wr, &code);
	wr_field(&d->wr, &n);
	if (n.v > rd_room(d) / 6)
		return past_end(d, "record operands");
	if (s->blockinfo && code.v == DIA_SETBID && n.v == 0)
		return corrupt(d, "SETBID without a block id");
	for (i = 0; i < n.v; i++) {
		if ((r = rd_vbr(d, 6, &f, "record operand")) != BC_OK)
			return r;
		wr_field(&d->wr, &f);
		if (i == 0 && s->blockinfo && code.v == DIA_SETBID) {
			s->setbid = 1;
			s->curbid = f.v;
		}
	}
	return BC_OK;
}

static int
el_array(struct dia *d, const struct op *elt)
{
	struct field n, f;
	uint64_t i;
	unsigned bits;
	int r;

	if ((r = rd_vbr(d, 6, &n, "array length")) != BC_OK)
		return r;
	wr_field(&d->wr, &n);
	bits = elt->enc == ENC_CHAR6 ? 6 : elt->width;	/* >= 1 */
	if (n.v > rd_room(d) / bits)
		return past_end(d, "array");
	for (i = 0; i < n.v; i++) {
		if ((r = rd_op(d, elt, &f)) != BC_OK)
			return r;
		wr_field(&d->wr, &f);
	}
	return BC_OK;
}

/* The operand before a blob of old bytes now holds nlen. */
static int
set_length(struct dia *d, struct field *f, size_t nlen)
{
	if (f->enc == ENC_FIXED && f->width < 64 &&
	    ((uint64_t)nlen >> f->width) != 0)
		return bc_seterr(d->err, BC_ERR_LIMIT, ".dia blob of %zu bytes "
		    "too long for its Fixed(%u) length operand (at most %llu)",
		    nlen, f->width,
		    (unsigned long long)(((uint64_t)1 << f->width) - 1));
	f->v = nlen;
	if (f->enc == ENC_VBR)
		f->chunks = vbr_chunks(nlen, f->width);
	return BC_OK;
}

/* Replace one blob; len_op is the scalar operand before it, or NULL. */
static int
el_blob(struct dia *d, struct field *len_op)
{
	struct field len;
	struct bc_buf view;
	char e[BC_ERRLEN];
	size_t nlen;
	int r;

	if ((r = rd_vbr(d, 6, &len, "blob length")) != BC_OK ||
	    (r = rd_align(d, "blob length")) != BC_OK)
		return r;
	if (len.v > rd_room(d) / 8)
		return past_end(d, "blob");
	if (d->rd.left != 0 ||
	    bc_buf_get_view(&d->rd.in, (size_t)len.v, &view) != BC_OK)
		return bc_seterr(d->err, BC_ERR_INTERNAL,
		    ".dia reader past its input");
	d->rd.pos += (size_t)len.v * 8;
	bc_buf_reset(&d->blob);
	e[0] = '\0';
	r = d->fn(d->ctx, bc_buf_ptr(&view), (size_t)len.v, &d->blob, e);
	if (r != BC_OK)
		return bc_seterr(d->err, r < 0 ? r : BC_ERR_INTERNAL, "%s",
		    e[0] != '\0' ? e : bc_strerror(r));
	nlen = bc_buf_len(&d->blob);
	if (nlen != len.v) {
		if (len_op != NULL && len_op->v == len.v &&
		    (r = set_length(d, len_op, nlen)) != BC_OK)
			return r;
		len.v = nlen;
		len.chunks = vbr_chunks(nlen, len.width);
	}
	if (len_op != NULL)
		wr_field(&d->wr, len_op);
	wr_field(&d->wr, &len);
	wr_align(&d->wr);
	wr_bytes(&d->wr, bc_buf_data(&d->blob), nlen);
	wr_align(&d->wr);
	return rd_align(d, "blob");
}

static int
el_record(struct dia *d, const struct field *id)
{
	const struct abbrev *a;
	const struct op *op;
	struct field held, f;
	int have = 0, r = BC_OK;
	unsigned i;

	memset(&held, 0, sizeof(held));
	if (d->scope[d->depth].blockinfo)
		return corrupt(d, "abbreviated record in BLOCKINFO");
	if ((a = abbrev_for(d, id->v)) == NULL)
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: "
		    "abbreviation id %llu not defined in block %llu at "
		    "byte %zu", (unsigned long long)id->v,
		    (unsigned long long)d->scope[d->depth].bid, at_byte(d));
	wr_field(&d->wr, id);
	for (i = 0; i < a->nops && r == BC_OK; i++) {
		op = &a->op[i];
		if (op->enc == ENC_BLOB) {
			r = el_blob(d, have ? &held : NULL);
			have = 0;
			continue;
		}
		if (have)
			wr_field(&d->wr, &held);
		have = 0;
		if (op->enc == ENC_LITERAL)
			continue;
		if (op->enc == ENC_ARRAY) {
			r = el_array(d, &a->op[++i]);
			continue;
		}
		if ((r = rd_op(d, op, &f)) != BC_OK)
			break;
		if (op->enc == ENC_CHAR6)
			wr_field(&d->wr, &f);
		else {
			held = f;	/* may be the next blob's length */
			have = 1;
		}
	}
	if (r == BC_OK && have)
		wr_field(&d->wr, &held);
	return r;
}

static int
el_enter(struct dia *d, const struct field *id)
{
	struct scope *s = &d->scope[d->depth], *ns;
	struct field bid, width;
	uint64_t words;
	unsigned i;
	int r;

	if (s->blockinfo)
		return corrupt(d, "block inside BLOCKINFO");
	if (d->depth == BC_MAX_DIA_DEPTH)
		return bc_seterr(d->err, BC_ERR_LIMIT, ".dia blocks nested "
		    "deeper than %d (BC_MAX_DIA_DEPTH) at byte %zu",
		    BC_MAX_DIA_DEPTH, at_byte(d));
	if ((r = rd_vbr(d, 8, &bid, "block id")) != BC_OK ||
	    (r = rd_vbr(d, 4, &width, "abbreviation id width")) != BC_OK)
		return r;
	if (width.v < 1 || width.v > 32)
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: "
		    "abbreviation id width %llu not in 1..32 at byte %zu",
		    (unsigned long long)width.v, at_byte(d));
	if ((r = rd_align(d, "block header")) != BC_OK ||
	    (r = rd_bits(d, 32, &words, "block length")) != BC_OK)
		return r;
	if (words > rd_room(d) / 32)
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: block "
		    "length of %llu words at byte %zu runs past the end of %s",
		    (unsigned long long)words, at_byte(d) - 4,
		    d->depth == 0 ? "the file" : "its block");
	wr_field(&d->wr, id);
	wr_field(&d->wr, &bid);
	wr_field(&d->wr, &width);
	wr_align(&d->wr);
	ns = &d->scope[++d->depth];
	memset(ns, 0, sizeof(*ns));
	ns->lenat = bc_buf_len(d->wr.out);
	wr_bits(&d->wr, 0, 32);		/* patched at END_BLOCK */
	ns->bid = bid.v;
	ns->width = (unsigned)width.v;
	ns->end = d->rd.pos + (size_t)words * 32;
	ns->blockinfo = bid.v == DIA_BLOCKINFO;
	ns->info = -1;
	for (i = 0; i < d->ninfo; i++)
		if (d->info[i].bid == bid.v) {
			ns->info = (int)i;
			ns->ninherit = d->info[i].n;
		}
	return BC_OK;
}

static int
el_end(struct dia *d, const struct field *id)
{
	struct scope *s = &d->scope[d->depth];
	uint64_t words;
	int r;

	wr_field(&d->wr, id);
	if ((r = rd_align(d, "END_BLOCK")) != BC_OK)
		return r;
	wr_align(&d->wr);
	if (d->rd.pos != s->end)
		return bc_seterr(d->err, BC_ERR_CORRUPT, "corrupt .dia: block "
		    "%llu ends at byte %zu, its length word says byte %zu",
		    (unsigned long long)s->bid, at_byte(d), s->end / 8);
	if ((r = wr_check(d)) != BC_OK)
		return r;
	words = (bc_buf_len(d->wr.out) - s->lenat - 4) / 4;
	if (words > UINT32_MAX)
		return bc_seterr(d->err, BC_ERR_LIMIT,
		    "rewritten .dia block of %llu words",
		    (unsigned long long)words);
	wr_patch32(&d->wr, s->lenat, (uint32_t)words);
	d->depth--;
	return BC_OK;
}

/* Every element after the magic, to the end of the input. */
static int
dia_run(struct dia *d)
{
	const struct scope *s;
	struct field id;
	int r;

	for (;;) {
		s = &d->scope[d->depth];
		if (d->depth == 0 && d->rd.pos == s->end)
			return BC_OK;
		if ((r = rd_fixed(d, s->width, &id, "abbreviation id")) !=
		    BC_OK)
			return r;
		if (d->depth == 0 && id.v != ID_ENTER_SUBBLOCK)
			return bc_seterr(d->err, BC_ERR_CORRUPT,
			    "corrupt .dia: abbreviation id %llu outside any "
			    "block at byte %zu (garbage after the last "
			    "block?)", (unsigned long long)id.v, at_byte(d));
		switch (id.v) {
		case ID_END_BLOCK:
			r = el_end(d, &id);
			break;
		case ID_ENTER_SUBBLOCK:
			r = el_enter(d, &id);
			break;
		case ID_DEFINE_ABBREV:
			r = el_define(d, &id);
			break;
		case ID_UNABBREV_RECORD:
			r = el_unabbrev(d, &id);
			break;
		default:
			r = el_record(d, &id);
			break;
		}
		if (r == BC_OK)
			r = wr_check(d);
		if (r != BC_OK)
			return r;
	}
}

int
bc_dia_rewrite(const void *in, size_t n, bc_dia_blob_fn fn, void *ctx,
    struct bc_buf *out, char *err)
{
	struct dia *d;
	size_t base;
	int r;

	if (fn == NULL || out == NULL || (in == NULL && n > 0))
		return bc_seterr(err, BC_ERR_INVAL, "rewriting .dia: bad "
		    "arguments");
	if (n > BC_MAX_DIA)
		return bc_seterr(err, BC_ERR_LIMIT, ".dia of %zu bytes, more "
		    "than %zu (BC_MAX_DIA)", n, (size_t)BC_MAX_DIA);
	if (n < DIA_MAGIC_LEN || memcmp(in, DIA_MAGIC, DIA_MAGIC_LEN) != 0)
		return bc_seterr(err, BC_ERR_CORRUPT,
		    "corrupt .dia: no DIAG magic");
	if (n % 4 != 0)
		return bc_seterr(err, BC_ERR_CORRUPT, "corrupt .dia: %zu "
		    "bytes, not whole 32-bit words (truncated, or garbage "
		    "after the last block)", n);
	if ((d = calloc(1, sizeof(*d))) == NULL)
		return bc_seterr(err, BC_ERR_ALLOC, "out of memory");
	d->fn = fn;
	d->ctx = ctx;
	d->err = err;
	bc_buf_view(&d->rd.in, in, n);
	(void)bc_buf_skip(&d->rd.in, DIA_MAGIC_LEN);
	d->rd.pos = 8 * DIA_MAGIC_LEN;
	d->scope[0].width = DIA_TOP_WIDTH;
	d->scope[0].end = 8 * n;
	d->scope[0].info = -1;
	d->wr.out = out;
	base = bc_buf_len(out);
	bc_buf_init(&d->blob, BC_MAX_DIA);
	wr_bytes(&d->wr, DIA_MAGIC, DIA_MAGIC_LEN);
	r = wr_check(d);
	if (r == BC_OK)
		r = dia_run(d);
	if (r != BC_OK)
		bc_buf_truncate(out, base);
	bc_buf_free(&d->blob);
	free(d);
	return r;
}
