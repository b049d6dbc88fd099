/* SPDX-License-Identifier: ISC */
/*
 * The table of migrd.conf keywords (config_keys.c) and the value types
 * that parse, default and print them (config_types.c).  Private to
 * config*.c and the unit tests; the rest of migrd sees config.h only.
 */
#ifndef MIGRD_CONFIG_KEYS_H
#define MIGRD_CONFIG_KEYS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

#define CONF_LINE_MAX	1024	/* characters of one line */
#define CONF_WORDS_MAX	8	/* words of one statement */
/* One formatted value: the longest field and some words around it. */
#define CONF_VALUE_MAX	(PATH_MAX + 2 * CONF_NAME_MAX + 64)

/* The state of one parse, handed to every type's parse function. */
struct conf_ctx {
	const char		*file;
	int			 line;		/* 0: about the whole file */
	int			 errors;
	struct migrd_conf	*c;
	uint64_t		 seen;		/* bit per conf_keys[] index */
};

struct conf_key;

/*
 * A value type.  parse gets the whole statement, w[0] being the keyword
 * and n - 1 (within minargs..maxargs) its arguments; it stores the value
 * or reports the error with conf_err and returns -1.  init sets the
 * default (NULL: all zero).  value formats the i-th value (only peer has
 * more than one) as the arguments that parse back to it, and returns
 * -1 if there is none (an empty string, no more peers).
 */
struct conf_type {
	int		 minargs, maxargs;
	int		(*parse)(struct conf_ctx *, const struct conf_key *,
			    char **, int);
	void		(*init)(const struct conf_key *, struct migrd_conf *);
	int		(*value)(const struct conf_key *,
			    const struct migrd_conf *, int, char *, size_t);
};

enum conf_unit {
	CU_NONE,
	CU_BYTES,
	CU_MS,
	CU_SECONDS
};

#define CK_REPEAT	0x1	/* may be given more than once */
#define CK_REQUIRED	0x2	/* must be given */
#define CK_AUTO		0x4	/* conf_path: "auto" is a value too */

struct conf_key {
	const char		*name;
	const struct conf_type	*type;
	size_t			 off;	/* offsetof(struct migrd_conf, field) */
	size_t			 size;	/* sizeof(field) */
	int			 flags;	/* CK_* */
	uint32_t		 min, max;	/* conf_uint: range */
	enum conf_unit		 unit;		/* conf_uint */
	uint32_t		 defu;	/* conf_uint, conf_enum, listen port */
	const char		*defs;	/* strings, listen address; NULL: none */
	const char		*what;	/* conf_name: "host name" in errors */
	const char *const	*choices;	/* conf_enum: NULL-terminated */
	const char		*descr;	/* one line for "migrd -nv" */
};

/* config_types.c */
extern const struct conf_type	conf_uint;	/* decimal, min..max */
extern const struct conf_type	conf_path;	/* absolute, < size */
extern const struct conf_type	conf_name;	/* [A-Za-z0-9][-._A-Za-z0-9]* */
extern const struct conf_type	conf_enum;	/* one of choices */
extern const char *const	conf_unit_names[];
extern const char *const	conf_yesno[];	/* a boolean's choices */

void	conf_err(struct conf_ctx *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
int	conf_get_uint(struct conf_ctx *, const char *, const char *,
	    uint32_t, uint32_t, uint32_t *);
int	conf_valid_name(const char *);
void	conf_set_str(char *, size_t, const char *);

/* config_keys.c */
extern const struct conf_key	conf_keys[];
extern const size_t		conf_nkeys;

const struct conf_key *conf_key_find(const char *);

#endif
