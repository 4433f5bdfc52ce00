/* yaml_lazy.c — libyaml, loaded at its first use (base/lazy.h).
 *
 * Only a policy file that is not in the policy cache (policy/ytree.c) is
 * parsed: a start whose files are all cached does not load libyaml, about
 * 0.2 ms of dynamic loading off every start. These functions have
 * libyaml's names and prototypes (checked against <yaml.h>). Where the
 * library cannot be loaded, yaml_parser_initialize fails and the policy
 * file is an error (load.c says why): nothing runs.
 */
#include <yaml.h>

#include "base/lazy.h"
#include "ytree.h"

/* The soname of libyaml 0.2. */
static struct tg_lazy_lib yaml = TG_LAZY_LIB("libyaml-0.so.2");

bool tg_yaml_load(char *why, size_t size)
{
	return tg_lazy_load(&yaml, why, size);
}

int yaml_parser_initialize(yaml_parser_t *parser)
{
	TG_LAZY_FN(yaml, yaml_parser_initialize);
	return fn_ ? fn_(parser) : 0;
}

void yaml_parser_set_input_string(yaml_parser_t *parser, const unsigned char *input, size_t size)
{
	TG_LAZY_FN(yaml, yaml_parser_set_input_string);
	if (fn_)
		fn_(parser, input, size);
}

int yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event)
{
	TG_LAZY_FN(yaml, yaml_parser_parse);
	return fn_ ? fn_(parser, event) : 0;
}

void yaml_event_delete(yaml_event_t *event)
{
	TG_LAZY_FN(yaml, yaml_event_delete);
	if (fn_)
		fn_(event);
}

void yaml_parser_delete(yaml_parser_t *parser)
{
	TG_LAZY_FN(yaml, yaml_parser_delete);
	if (fn_)
		fn_(parser);
}
