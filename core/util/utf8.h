/*
 * utf8.h - UTF-8 validation shared by the writers that must emit valid text
 * (the table writer, the Chrome-trace exporter).
 */
#ifndef GTRACE_UTF8_H
#define GTRACE_UTF8_H

/* length (2..4) of the valid UTF-8 sequence starting at p, 0 when the bytes
 * there are not one (ASCII, overlong, surrogate, out of range, cut short by
 * a NUL or any non-continuation byte) */
int utf8_seq_len(const unsigned char *p);

#endif
