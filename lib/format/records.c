/* SPDX-License-Identifier: MIT */
/* records.c: checks of the records every binary stream shares. */
#include <string.h>

#include "python.h"
#include "records.h"

static int has_nul(const char *s, size_t n)
{
	return memchr(s, 0, n) != NULL;
}

const char *sp_rec_check_common(const struct sp_rec_hdr *rec)
{
	switch (rec->type) {
	case SP_REC_MMAP: {
		const struct sp_mmap_rec *m = (const void *)rec;

		if (rec->size < sizeof(*m) + 8)
			return "MMAP record too short";
		if (!has_nul(m->filename, rec->size - sizeof(*m)))
			return "MMAP filename not terminated";
		if (m->build_id_size > sizeof(m->build_id))
			return "MMAP build-id size over 24";
		if (m->start + m->len < m->start)
			return "MMAP range wraps";
		return NULL;
	}
	case SP_REC_COMM: {
		const struct sp_comm_rec *c = (const void *)rec;

		if (rec->size < sizeof(*c))
			return "COMM record too short";
		if (!has_nul(c->comm, sizeof(c->comm)))
			return "COMM name not terminated";
		return NULL;
	}
	case SP_REC_FORK:
	case SP_REC_EXIT:
		return rec->size < sizeof(struct sp_task_rec) ?
			"FORK/EXIT record too short" : NULL;
	case SP_REC_LOST:
		return rec->size < sizeof(struct sp_lost_rec) ?
			"LOST record too short" : NULL;
	case SP_REC_THROTTLE:
		return rec->size < sizeof(struct sp_throttle_rec) ?
			"THROTTLE record too short" : NULL;
	case SP_REC_IMAGE: {
		const struct sp_image_rec *im = (const void *)rec;

		if (rec->size < sizeof(*im))
			return "IMAGE record too short";
		if (im->len > rec->size - sizeof(*im))
			return "IMAGE length exceeds its record";
		if (im->start + im->len < im->start)
			return "IMAGE range wraps";
		return NULL;
	}
	case SP_REC_KSYM: {
		const struct sp_ksym_rec *k = (const void *)rec;

		if (rec->size < sizeof(*k) + 8)
			return "KSYM record too short";
		if (!has_nul(k->name, rec->size - sizeof(*k)))
			return "KSYM name not terminated";
		return NULL;
	}
	case SP_REC_PERFMAP: {
		const struct sp_perfmap_rec *m = (const void *)rec;

		if (rec->size < sizeof(*m))
			return "PERFMAP record too short";
		if (m->len > rec->size - sizeof(*m))
			return "PERFMAP length exceeds its record";
		return NULL;
	}
	case SP_REC_PYCODE: {
		struct sp_pycode_view v;

		return sp_pycode_parse(rec, &v);
	}
	default:
		return NULL;
	}
}
