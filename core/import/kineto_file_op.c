/*
 * kineto_file_op.c - the args of a Kineto CPU op that the operator table groups
 * by: "Input Dims" (the shapes of its inputs, a JSON array) and "Call stack"
 * (Python frames, ';'-separated).  Each is interned once per distinct text
 * and referenced from the event: arg bits 0-31 = input shapes string id,
 * aux = call stack string id (0 = the trace has none).  The shapes keep the
 * text the PyTorch TensorBoard plugin shows and groups by, Python's str()
 * of the list: no whitespace but one space after each comma
 * ("[[32, 3, 224, 224], []]").
 */
#include <string.h>
#include "kineto.h"

/* longest input shapes text kept whole; longer ones end in "..." */
#define KOP_SHAPE_MAX 4096

/* Python's str() of a JSON array of numbers / arrays / strings: `in` of
 * length n into out (room for KOP_SHAPE_MAX bytes); the length written */
static size_t shape_text(const char *in, size_t n, char *out)
{
	size_t o = 0;
	int instr = 0, esc = 0;
	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		if (o + 5 >= KOP_SHAPE_MAX) {
			memcpy(out + o, "...", 3);
			return o + 3;
		}
		if (instr) {
			/* Python's repr: \" is a plain " in its '...' quotes, other
			   escapes stay as written */
			if (esc) {
				if (c != '"')
					out[o++] = '\\';
				out[o++] = c;
				esc = 0;
			} else if (c == '\\') {
				esc = 1;
			} else {
				out[o++] = c == '"' ? '\'' : c;
				instr = c != '"';
			}
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (c == '"') {
			instr = 1;
			out[o++] = '\'';
			continue;
		}
		out[o++] = c;
		if (c == ',')
			out[o++] = ' ';
	}
	return o;
}

void kineto_file_op(struct kineto_file *kf, const struct kev *ev, struct gt_event *g)
{
	if (ev->dims.s && ev->dims.len) {
		char buf[KOP_SHAPE_MAX];
		size_t n = shape_text(ev->dims.s, ev->dims.len, buf);
		g->arg = (g->arg & ~(uint64_t)0xffffffffu) | kineto_file_intern(kf, buf, n);
	}
	if (ev->stack.s && ev->stack.len)
		g->aux = kineto_file_intern(kf, ev->stack.s, ev->stack.len);
}
