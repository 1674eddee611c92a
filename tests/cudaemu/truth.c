/*
 * truth.c - the stand-in trainer's ground truth (tests/cudaemu/truth.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "truth.h"

void truth_free(struct truth *t)
{
	free(t->w);
	free(t->g);
	free(t->nv);
	free(t->y);
	free(t->c);
	free(t->a);
	free(t->p);
	free(t->idx);
	free(t->owner);
	memset(t, 0, sizeof(*t));
}

/* room for one more element of size sz in *arr (n used, *cap held) */
static void *grow(void *arr, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return arr;
	size_t nc = *cap ? *cap * 2 : 1024;
	void *p = realloc(arr, nc * sz);
	if (p)
		*cap = nc;
	return p;
}

#define PUSH(arr, n, cap) (((arr) = grow((arr), (n), &(cap), sizeof(*(arr)))) ? \
			   memset(&(arr)[(n)], 0, sizeof(*(arr))), &(arr)[(n)] : NULL)

static int line_of(const char *path, const char *line, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: bad truth line: %.200s", path, line);
	return -1;
}

int truth_read(const char *path, struct truth *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->handed_over = t->abandoned = ~0ull;
	t->ext_calls = -1;
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: cannot open", path);
		return -1;
	}
	char line[512];
	size_t cap_w = 0, cap_g = 0, cap_n = 0, cap_y = 0, cap_c = 0, cap_o = 0, cap_a = 0, cap_p = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		switch (line[0]) {
		case '#':
			sscanf(line, "# pid %ld devices %d window %llu %llu", &t->pid, &t->devices,
			       &t->window[0], &t->window[1]);
			break;
		case 'F': {
			int pid, st;
			unsigned long long ms;
			if (sscanf(line, "F\t%d\t%d\t%llu", &pid, &st, &ms) != 3 || pid <= 0) {
				rc = line_of(path, line, err, errlen);
				break;
			}
			if (st != 0 && !t->fork_bad_status)
				t->fork_bad_status = st;
			if (ms > t->fork_max_ms)
				t->fork_max_ms = ms;
			t->forks++;
			break;
		}
		case 'G': {
			struct truth_g *g = PUSH(t->g, t->n_g, cap_g);
			if (!g || sscanf(line, "G\t%d\t%u\t%u\t%u\t%llu\t%llu\t%u\t%u\t%llu\t%llu\t%63s",
					 &g->device, &g->stream, &g->corr, &g->tid, &g->api_start,
					 &g->api_end, &g->graph, &g->node, &g->start, &g->end, g->name) != 11)
				rc = line_of(path, line, err, errlen);
			else
				t->n_g++;
			break;
		}
		case 'N': {
			struct truth_n *n = PUSH(t->nv, t->n_nv, cap_n);
			if (!n || sscanf(line, "N\t%u\t%u\t%llu\t%llu", &n->tid, &n->depth, &n->start,
					 &n->end) != 4)
				rc = line_of(path, line, err, errlen);
			else
				t->n_nv++;
			break;
		}
		case 'Y': {
			struct truth_y *y = PUSH(t->y, t->n_y, cap_y);
			if (!y || sscanf(line, "Y\t%d\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu", &y->device,
					 &y->stream, &y->corr, &y->tid, &y->api_start, &y->api_end,
					 &y->start, &y->end) != 8)
				rc = line_of(path, line, err, errlen);
			else
				t->n_y++;
			break;
		}
		case 'C': {
			struct truth_c *c = PUSH(t->c, t->n_c, cap_c);
			if (!c || sscanf(line, "C\t%d\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%u",
					 &c->device, &c->stream, &c->corr, &c->tid, &c->api_start,
					 &c->api_end, &c->start, &c->end, &c->bytes, &c->copy_kind,
					 &c->index) != 11)
				rc = line_of(path, line, err, errlen);
			else
				t->n_c++;
			break;
		}
		case 'A': {
			struct truth_a *a = PUSH(t->a, t->n_a, cap_a);
			if (!a || sscanf(line, "A\t%d\t%u\t%u\t%llu\t%llu\t%d", &a->device, &a->corr,
					 &a->tid, &a->ts, &a->bytes, &a->op) != 6 ||
			    (a->op != 1 && a->op != 2))
				rc = line_of(path, line, err, errlen);
			else
				t->n_a++;
			break;
		}
		case 'P': {
			struct truth_p *p = PUSH(t->p, t->n_p, cap_p);
			if (!p || sscanf(line, "P\t%d\t%d\t%llu\t%llu\t%llu\t%llu\t%u", &p->device,
					 &p->op, &p->ts, &p->pool, &p->size, &p->used, &p->corr) != 7 ||
			    p->op < 1 || p->op > 5)
				rc = line_of(path, line, err, errlen);
			else
				t->n_p++;
			break;
		}
		case 'S': {
			int k = sscanf(line, "S\trecords\t%llu\tdropped\t%llu\trefused\t%llu"
				       "\thanded_over\t%llu\tabandoned\t%llu\tcalls\t%llu", &t->records,
				       &t->dropped, &t->refused, &t->handed_over, &t->abandoned,
				       &t->call_records);
			if (k != 3 && k != 5 && k != 6)
				rc = line_of(path, line, err, errlen);
			t->have_stats = 1;
			break;
		}
		case 'K':
			if (sscanf(line, "K\tunknown\t%llu\trecords\t%llu", &t->kineto_unknown,
				   &t->kineto_records) != 2)
				rc = line_of(path, line, err, errlen);
			t->have_kineto = 1;
			break;
		case 'O': {
			unsigned corr;
			int o;
			if (sscanf(line, "O\t%u\t%d", &corr, &o) != 2 || o < 0 || o > 255 ||
			    corr > 100000000u) {
				rc = line_of(path, line, err, errlen);
				break;
			}
			while (t->n_owner <= corr) {
				uint8_t *b = PUSH(t->owner, t->n_owner, cap_o);
				if (!b)
					break;
				t->n_owner++;
			}
			if (t->n_owner <= corr)
				rc = line_of(path, line, err, errlen);
			else
				t->owner[corr] = (uint8_t)o;
			break;
		}
		case 'X':
			if (sscanf(line, "X\tcalls\t%d\thandled\t%llu", &t->ext_calls,
				   &t->ext_handled) != 2)
				rc = line_of(path, line, err, errlen);
			break;
		case 'W': {
			struct truth_w *w = PUSH(t->w, t->n, cap_w);
			if (!w || sscanf(line, "W\t%d\t%d\t%u\t%u\t%u\t%llu\t%llu\t%llu\t%llu\t%llu\t%u\t%u\t%u\t%u\t%u\t%u\t%63s\t%d\t%d",
					 &w->kind, &w->device, &w->stream, &w->corr, &w->tid,
					 &w->api_start, &w->api_end, &w->start, &w->end, &w->bytes,
					 &w->grid[0], &w->grid[1], &w->grid[2], &w->block[0],
					 &w->block[1], &w->block[2], w->name, &w->foreign,
					 &w->bad_ts) != 19)
				rc = line_of(path, line, err, errlen);
			else
				t->n++;
			break;
		}
		default:
			rc = line_of(path, line, err, errlen);
		}
	}
	fclose(f);
	return rc;
}

struct truth_w *truth_by_corr(struct truth *t, uint32_t corr)
{
	if (!t->idx) {
		for (size_t i = 0; i < t->n; i++)
			t->max_corr = t->w[i].corr > t->max_corr ? t->w[i].corr : t->max_corr;
		t->idx = calloc((size_t)t->max_corr + 1, sizeof(*t->idx));
		if (!t->idx)
			return NULL;
		for (size_t i = 0; i < t->n; i++)
			t->idx[t->w[i].corr] = &t->w[i];
	}
	return corr <= t->max_corr ? t->idx[corr] : NULL;
}
