/* zstd_lazy.c — libzstd, loaded at its first use (base/lazy.h).
 *
 * Only the journal's tar calls it: a pre-image saved on a filesystem
 * without reflink, and its restore. A run that saves none (most runs of an
 * agent's tool calls change nothing, or make only new files) does not load
 * it: about 0.2 ms of dynamic loading off every start. These functions
 * have libzstd's names and prototypes (checked against <zstd.h>). Where the
 * library cannot be loaded, the contexts are NULL, sizes 0 and every code
 * an error: the capture fails and its call is refused (fail closed).
 */
#include <zstd.h>

#include "base/lazy.h"
#include "tar.h"

/* The soname of libzstd 1.x. */
static struct tg_lazy_lib zstd = TG_LAZY_LIB("libzstd.so.1");

/* As ZSTD_isError counts it: a code no call can return when it worked. */
#define NO_LIBRARY ((size_t)-1)

bool tg_zstd_load(char *why, size_t size)
{
	return tg_lazy_load(&zstd, why, size);
}

unsigned ZSTD_isError(size_t code)
{
	TG_LAZY_FN(zstd, ZSTD_isError);
	return fn_ ? fn_(code) : 1;
}

size_t ZSTD_CStreamOutSize(void)
{
	TG_LAZY_FN(zstd, ZSTD_CStreamOutSize);
	return fn_ ? fn_() : 0;
}

ZSTD_CCtx *ZSTD_createCCtx(void)
{
	TG_LAZY_FN(zstd, ZSTD_createCCtx);
	return fn_ ? fn_() : NULL;
}

size_t ZSTD_freeCCtx(ZSTD_CCtx *cctx)
{
	if (!cctx)
		return 0;
	TG_LAZY_FN(zstd, ZSTD_freeCCtx);
	return fn_ ? fn_(cctx) : NO_LIBRARY;
}

size_t ZSTD_CCtx_setParameter(ZSTD_CCtx *cctx, ZSTD_cParameter param, int value)
{
	TG_LAZY_FN(zstd, ZSTD_CCtx_setParameter);
	return fn_ ? fn_(cctx, param, value) : NO_LIBRARY;
}

size_t ZSTD_CCtx_reset(ZSTD_CCtx *cctx, ZSTD_ResetDirective reset)
{
	TG_LAZY_FN(zstd, ZSTD_CCtx_reset);
	return fn_ ? fn_(cctx, reset) : NO_LIBRARY;
}

size_t ZSTD_CCtx_setPledgedSrcSize(ZSTD_CCtx *cctx, unsigned long long size)
{
	TG_LAZY_FN(zstd, ZSTD_CCtx_setPledgedSrcSize);
	return fn_ ? fn_(cctx, size) : NO_LIBRARY;
}

size_t ZSTD_DCtx_reset(ZSTD_DCtx *dctx, ZSTD_ResetDirective reset)
{
	TG_LAZY_FN(zstd, ZSTD_DCtx_reset);
	return fn_ ? fn_(dctx, reset) : NO_LIBRARY;
}

size_t ZSTD_compressStream2(ZSTD_CCtx *cctx, ZSTD_outBuffer *output, ZSTD_inBuffer *input,
                            ZSTD_EndDirective endOp)
{
	TG_LAZY_FN(zstd, ZSTD_compressStream2);
	return fn_ ? fn_(cctx, output, input, endOp) : NO_LIBRARY;
}

ZSTD_DCtx *ZSTD_createDCtx(void)
{
	TG_LAZY_FN(zstd, ZSTD_createDCtx);
	return fn_ ? fn_() : NULL;
}

size_t ZSTD_freeDCtx(ZSTD_DCtx *dctx)
{
	if (!dctx)
		return 0;
	TG_LAZY_FN(zstd, ZSTD_freeDCtx);
	return fn_ ? fn_(dctx) : NO_LIBRARY;
}

size_t ZSTD_DStreamInSize(void)
{
	TG_LAZY_FN(zstd, ZSTD_DStreamInSize);
	return fn_ ? fn_() : 0;
}

size_t ZSTD_DStreamOutSize(void)
{
	TG_LAZY_FN(zstd, ZSTD_DStreamOutSize);
	return fn_ ? fn_() : 0;
}

size_t ZSTD_decompressStream(ZSTD_DStream *zds, ZSTD_outBuffer *output, ZSTD_inBuffer *input)
{
	TG_LAZY_FN(zstd, ZSTD_decompressStream);
	return fn_ ? fn_(zds, output, input) : NO_LIBRARY;
}
