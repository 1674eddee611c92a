/*
 * pinj_elf.c - the little of ELF64 (little endian) that injection needs
 * (gtrace/pinj.h): the vaddr of a dynamic symbol (.dynsym through its
 * section header), the first PT_LOAD's vaddr (load bias = mapping start -
 * it), and a code pattern inside an executable PT_LOAD.  The file is read
 * whole; every offset is checked against its size (a damaged or foreign
 * file is an error, never a crash).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gtrace/pinj.h"

#define MAX_FILE (1ull << 30)

/* 1 when [off, off + len) lies inside the file */
static int in_file(const struct gt_pinj_elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

/* 1 when a table at off may be read as 8-byte words (the buffer is
 * malloc-aligned; a real file aligns its tables) */
static int aligned8(uint64_t off)
{
	return off % 8 == 0;
}

static const Elf64_Ehdr *ehdr(const struct gt_pinj_elf *e)
{
	return (const Elf64_Ehdr *)(const void *)e->data;
}

/* program header i, or NULL */
static const Elf64_Phdr *phdr(const struct gt_pinj_elf *e, unsigned i)
{
	const Elf64_Ehdr *h = ehdr(e);
	uint64_t off = h->e_phoff + (uint64_t)i * sizeof(Elf64_Phdr);
	if (h->e_phentsize != sizeof(Elf64_Phdr) || !aligned8(off) ||
	    !in_file(e, off, sizeof(Elf64_Phdr)))
		return NULL;
	return (const Elf64_Phdr *)(const void *)(e->data + off);
}

static const Elf64_Shdr *shdr(const struct gt_pinj_elf *e, unsigned i)
{
	const Elf64_Ehdr *h = ehdr(e);
	uint64_t off = h->e_shoff + (uint64_t)i * sizeof(Elf64_Shdr);
	if (i >= h->e_shnum || h->e_shentsize != sizeof(Elf64_Shdr) || !aligned8(off) ||
	    !in_file(e, off, sizeof(Elf64_Shdr)))
		return NULL;
	return (const Elf64_Shdr *)(const void *)(e->data + off);
}

int gt_pinj_elf_from_mem(struct gt_pinj_elf *e, const void *data, size_t size, char *err, size_t errlen)
{
	memset(e, 0, sizeof(*e));
	e->data = (uint8_t *)data;
	e->size = size;
	const Elf64_Ehdr *h = ehdr(e);
	if (size < sizeof(Elf64_Ehdr) || ((uintptr_t)data & 7) || memcmp(h->e_ident, ELFMAG, SELFMAG)) {
		snprintf(err, errlen, "not an ELF file");
		return -ENOEXEC;
	}
	if (h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_ident[EI_DATA] != ELFDATA2LSB) {
		snprintf(err, errlen, "not a 64-bit little-endian ELF file");
		return -ENOEXEC;
	}
	e->machine = h->e_machine;
	e->load_vaddr = UINT64_MAX;
	for (unsigned i = 0; i < h->e_phnum; i++) {
		const Elf64_Phdr *p = phdr(e, i);
		if (!p) {
			snprintf(err, errlen, "damaged ELF program headers");
			return -ENOEXEC;
		}
		if (p->p_type == PT_LOAD && e->load_vaddr == UINT64_MAX)
			e->load_vaddr = p->p_vaddr & ~(uint64_t)4095;
	}
	if (e->load_vaddr == UINT64_MAX) {
		snprintf(err, errlen, "ELF file without a loadable segment");
		return -ENOEXEC;
	}
	return 0;
}

int gt_pinj_elf_open(struct gt_pinj_elf *e, const char *path, char *err, size_t errlen)
{
	memset(e, 0, sizeof(*e));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	struct stat st;
	uint8_t *buf = NULL;
	int rc = -EIO;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || (uint64_t)st.st_size > MAX_FILE) {
		snprintf(err, errlen, "%s: not a regular file of a sane size", path);
		goto out;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			snprintf(err, errlen, "%s: short read", path);
			goto out;
		}
		got += (size_t)n;
	}
	char why[128];
	rc = gt_pinj_elf_from_mem(e, buf, got, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		goto out;
	}
	buf = NULL;         /* e owns it */
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

void gt_pinj_elf_close(struct gt_pinj_elf *e)
{
	free(e->data);
	memset(e, 0, sizeof(*e));
}

int gt_pinj_elf_sym(const struct gt_pinj_elf *e, const char *name, uint64_t *vaddr)
{
	const Elf64_Ehdr *h = ehdr(e);
	size_t nl = strlen(name);
	for (unsigned i = 0; i < h->e_shnum; i++) {
		const Elf64_Shdr *s = shdr(e, i);
		if (!s || s->sh_type != SHT_DYNSYM || s->sh_entsize != sizeof(Elf64_Sym))
			continue;
		const Elf64_Shdr *strs = shdr(e, s->sh_link);
		if (!strs || !aligned8(s->sh_offset) || !in_file(e, s->sh_offset, s->sh_size) ||
		    !in_file(e, strs->sh_offset, strs->sh_size))
			continue;
		const char *tab = (const char *)e->data + strs->sh_offset;
		size_t nsym = s->sh_size / sizeof(Elf64_Sym);
		for (size_t k = 1; k < nsym; k++) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(const void *)
				(e->data + s->sh_offset + k * sizeof(Elf64_Sym));
			if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0 ||
			    sym->st_name >= strs->sh_size || strs->sh_size - sym->st_name <= nl)
				continue;
			int type = ELF64_ST_TYPE(sym->st_info);
			if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT)
				continue;
			if (!memcmp(tab + sym->st_name, name, nl + 1)) {
				*vaddr = sym->st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int gt_pinj_elf_find_code(const struct gt_pinj_elf *e, const void *pat, size_t len, size_t align,
		       uint64_t *vaddr)
{
	const Elf64_Ehdr *h = ehdr(e);
	const struct gt_pinj_arch *a = gt_pinj_arch_for(e->machine);
	for (unsigned i = 0; i < h->e_phnum; i++) {
		const Elf64_Phdr *p = phdr(e, i);
		if (!p || p->p_type != PT_LOAD || !(p->p_flags & PF_X) ||
		    !in_file(e, p->p_offset, p->p_filesz) || p->p_filesz < len)
			continue;
		const uint8_t *seg = e->data + p->p_offset;
		/* aligned in memory: p_vaddr and p_offset agree modulo the page */
		uint64_t first = (align - (p->p_vaddr % align)) % align;
		for (uint64_t k = first; k + len <= p->p_filesz; k += align) {
			int hit = (pat == NULL && a) ? gt_pinj_arch_is_trap(a, seg + k)
						     : pat && !memcmp(seg + k, pat, len);
			if (hit) {
				*vaddr = p->p_vaddr + k;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int gt_pinj_elf_has_bytes(const struct gt_pinj_elf *e, const void *needle, size_t len)
{
	return len && e->size >= len && memmem(e->data, e->size, needle, len) != NULL;
}
