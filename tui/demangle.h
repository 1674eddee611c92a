/*
 * demangle.h - a small Itanium C++ name demangler for kernel names (no
 * curses).  It renders the qualified name and writes template arguments
 * as "<...>" and parameters as "(...)"; it does not spell out types.
 * Names that are not mangled are copied unchanged.
 */
#ifndef GTRACE_TUI_DEMANGLE_H
#define GTRACE_TUI_DEMANGLE_H

#include <stddef.h>

/* demangle `in` into out (always NUL-terminated); returns out */
char *demangle_name(const char *in, char *out, size_t len);
/* the short form for labels: last name component without template
 * arguments or parameters ("at::native::foo<float>(int)" -> "foo") */
char *demangle_short(const char *in, char *out, size_t len);
struct gt_store;
/* the short form of a name of store s: the source's own short name when
 * it gave one (nsys's shortName, gt_store_str_short), else demangle_short */
char *demangle_short_of(const struct gt_store *s, const char *in, char *out, size_t len);

#endif
