/* SPDX-License-Identifier: MIT */
/* Unit test of the truth-log reader (no driver needed): parsing, typed records, queries. */
#include "zt.h"
#include "zt_truth.h"

static const char good[] =
    "{\"kind\":\"device\",\"device\":0,\"name\":\"zesim GPU 0\",\"hz\":19200000,\"ts_bits\":64,"
    "\"kernel_ts_bits\":32,\"drift_ppm\":20,\"offset_ns\":-5,\"wrap_after_ms\":200,"
    "\"h0\":123456789,\"t0\":4291127296,\"pid\":4242}\n"
    "\n"
    "  {\"kind\":\"device\",\"device\":1,\"name\":\"GPU \\\"1\\\" \\u00e9\\ud83d\\ude00\","
    "\"hz\":19200000,\"ts_bits\":32,\"kernel_ts_bits\":32,\"drift_ppm\":-1.5e1,\"offset_ns\":0,"
    "\"wrap_after_ms\":0.5,\"h0\":18446744073709551615,\"t0\":0,\"pid\":4242}  \r\n"
    "{\"seq\":1,\"kind\":\"kernel\",\"launch\":\"plain\",\"name\":\"busy\",\"device\":0,"
    "\"ordinal\":0,\"index\":2,\"queue\":\"0x55d0c0ffee00\",\"list\":\"0x55d0c0ffee00\","
    "\"immediate\":true,\"exec\":0,\"cmd\":7,\"ts_start\":4294967295,\"ts_end\":100,"
    "\"host_start\":2000,\"host_end\":7000,\"bytes\":0,\"src\":null,\"dst\":null,"
    "\"groups\":[4,1,1],\"group_size\":[64,1,1],\"signal\":\"0xabc\",\"waits\":[\"0x1\","
    "\"0x2\"],\"tid\":77,\"future_field\":{\"ignored\":1}}\n";

/* future_field above is an object: the strict parser rejects it. The lenient one skips it. */

static const char ops[] =
    "{\"seq\":0,\"kind\":\"copy\",\"launch\":null,\"name\":null,\"device\":1,\"ordinal\":1,"
    "\"index\":0,\"queue\":\"0x10\",\"list\":\"0x20\",\"immediate\":false,\"exec\":3,\"cmd\":1,"
    "\"ts_start\":5,\"ts_end\":9,\"host_start\":300,\"host_end\":900,\"bytes\":4096,"
    "\"src\":\"host\",\"dst\":\"device\",\"groups\":null,\"group_size\":null,\"signal\":null,"
    "\"waits\":[],\"tid\":12,\"extra\":[1,2.5,\"x\",true,null]}\n"
    "{\"seq\":2,\"kind\":\"kernel\",\"launch\":\"indirect\",\"name\":\"a\",\"device\":0,"
    "\"ordinal\":0,\"index\":0,\"queue\":\"0x10\",\"list\":\"0x20\",\"immediate\":false,"
    "\"exec\":3,\"cmd\":0,\"ts_start\":1,\"ts_end\":2,\"host_start\":100,\"host_end\":200,"
    "\"bytes\":0,\"groups\":[1,2,3],\"group_size\":[4,5,6],\"signal\":\"0x30\","
    "\"waits\":[\"0x31\"],\"tid\":-1}\n"
    "{\"seq\":1,\"kind\":\"kernel\",\"launch\":\"plain\",\"name\":\"b\",\"device\":0,"
    "\"ordinal\":0,\"index\":1,\"queue\":\"0x11\",\"list\":\"0x21\",\"immediate\":false,"
    "\"exec\":0,\"cmd\":0,\"ts_start\":1,\"ts_end\":2,\"host_start\":100,\"host_end\":150,"
    "\"bytes\":0,\"groups\":[1,1,1],\"group_size\":[1,1,1],\"signal\":null,\"waits\":[],"
    "\"tid\":5}\n";

static void test_strict_rejects(void)
{
    zt_truth t;
    char err[256] = "";
    int r = zt_truth_parse(good, sizeof good - 1, 0, &t, err, sizeof err);
    zt_is_int(r, -1, "strict parser rejects a nested object");
    zt_ok(strstr(err, "line 4") != NULL, "error names the line (%s)", err);
    zt_is_int(t.nops + t.ndevices + t.nobjects, 0, "failed parse leaves an empty zt_truth");
    zt_truth_free(&t);

    static const char *const bad[] = {
        "{\"kind\":\"x\",}",        "{\"kind\":\"x\"",          "{\"kind\":\"x\"} x",
        "{\"kind\":01}",            "{\"kind\":\"a\\q\"}",      "[1]",
        "{\"kind\":\"x\",\"kind\":\"y\"}", "{\"a\":1}",         "{\"kind\":\"x\",\"v\":[[1]]}",
        "{\"kind\":\"x\",\"v\":tru}", "{\"kind\":\"\\ud800\"}", "{\"kind\":\"x\",\"v\":1.}",
        "{\"kind\":\"x\",\"v\":-}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        r = zt_truth_parse(bad[i], strlen(bad[i]), 0, &t, err, sizeof err);
        zt_is_int(r, -1, "rejects %s (%s)", bad[i], err);
        zt_truth_free(&t);
    }
}

static void test_devices(void)
{
    zt_truth t;
    char err[256] = "";
    int r = zt_truth_parse(good, sizeof good - 1, ZT_TRUTH_LENIENT, &t, err, sizeof err);
    zt_is_int(r, 0, "lenient parse succeeds (%s)", err);
    zt_is_int(t.nbad, 1, "one bad line skipped");
    zt_is_int(t.ndevices, 2, "two device lines");
    zt_is_int(t.nops, 0, "no op lines");
    const zt_truth_device *d0 = zt_truth_device_find(&t, 0), *d1 = zt_truth_device_find(&t, 1);
    zt_ok(d0 && d1, "both devices found");
    zt_ok(zt_truth_device_find(&t, 2) == NULL, "no device 2");
    if (!d0 || !d1) {
        zt_truth_free(&t);
        return;
    }
    char why[256] = "";
    zt_ok(zt_truth_device_check(d0, why, sizeof why), "device 0 complete (%s)", why);
    zt_is_str(d0->name, "zesim GPU 0", "name");
    zt_is_u64(d0->hz, 19200000, "hz");
    zt_is_int(d0->ts_bits, 64, "ts_bits");
    zt_is_int(d0->kernel_ts_bits, 32, "kernel_ts_bits");
    zt_near(d0->drift_ppm, 20, 0, "drift");
    zt_is_int(d0->offset_ns, -5, "negative offset");
    zt_is_u64(d0->t0, 4291127296u, "t0");
    zt_is_u64(d0->h0, 123456789, "h0");
    zt_is_int(d0->pid, 4242, "pid");
    zt_is_int(d0->line, 1, "line number 1");
    zt_is_int(d1->line, 3, "line number 3 (blank line counted)");
    zt_is_str(d1->name, "GPU \"1\" \xc3\xa9\xf0\x9f\x98\x80", "escapes and surrogate pairs");
    zt_near(d1->drift_ppm, -15, 0, "exponent number");
    zt_near(d1->wrap_after_ms, 0.5, 0, "fractional wrap_after_ms");
    zt_is_u64(d1->h0, UINT64_MAX, "full uint64 range");

    /* clock model: T0 + floor((h - H0) * (1 + ppm/1e6) * hz / 1e9) */
    zt_is_u64(zt_truth_full_ticks(d0, d0->h0), d0->t0, "full ticks at H0 = T0");
    zt_is_u64(zt_truth_full_ticks(d0, d0->h0 + 1000000000u), d0->t0 + 19200384u,
              "one second at +20 ppm = 19200384 ticks");
    zt_is_u64(zt_truth_full_ticks(d0, d0->h0 + 52), d0->t0 + 0, "52 ns < 1 tick (floor)");
    zt_is_u64(zt_truth_full_ticks(d0, d0->h0 + 53), d0->t0 + 1, "53 ns = 1 tick");
    zt_is_u64(zt_mask_bits(zt_truth_full_ticks(d0, d0->h0 + 200000000u), 32), 76,
              "200 ms after H0 the 32-bit counter wraps (+ drift)");
    zt_is_u64(zt_mask_bits(0x123456789ull, 32), 0x23456789u, "mask 32");
    zt_is_u64(zt_mask_bits(0x123456789ull, 64), 0x123456789ull, "mask 64");
    zt_near(zt_truth_ticks_for_ns(d0, 1e9), 19200384.0, 1e-6, "ticks_for_ns");
    zt_truth_free(&t);
    zt_truth_free(&t); /* idempotent */
}

static void test_ops(void)
{
    zt_truth t;
    char err[256] = "";
    int r = zt_truth_parse(ops, sizeof ops - 1, 0, &t, err, sizeof err);
    zt_is_int(r, 0, "ops parse (%s)", err);
    zt_is_int(t.nops, 3, "three ops");
    if (t.nops != 3) {
        zt_truth_free(&t);
        return;
    }
    const zt_truth_op *c = &t.ops[0];
    char why[256] = "";
    zt_ok(zt_truth_op_check(c, why, sizeof why), "copy line complete (%s)", why);
    zt_is_str(c->kind, "copy", "kind");
    zt_ok(c->launch == NULL && c->name == NULL, "null launch and name");
    zt_is_int(c->device, 1, "device");
    zt_is_int(c->ordinal, 1, "ordinal");
    zt_is_u64(c->queue, 0x10, "queue handle");
    zt_is_u64(c->list, 0x20, "list handle");
    zt_is_int(c->immediate, 0, "immediate false");
    zt_is_u64(c->exec, 3, "exec");
    zt_is_u64(c->bytes, 4096, "bytes");
    zt_is_str(c->src, "host", "src");
    zt_is_str(c->dst, "device", "dst");
    zt_is_u64(c->signal, 0, "null signal = 0");
    zt_is_int(c->nwaits, 0, "empty waits");
    zt_ok(!(c->present & ZT_TO_GROUPS), "null groups is not present");
    const zt_jvalue *extra = zt_jobject_get(c->raw, "extra");
    zt_ok(extra && extra->type == ZT_JARR && extra->nitems == 5, "unknown field kept in raw");
    if (extra && extra->nitems == 5) {
        zt_ok(extra->items[1].type == ZT_JNUM && !extra->items[1].is_int &&
                  extra->items[1].d == 2.5,
              "mixed array: double");
        zt_is_str(extra->items[2].s, "x", "mixed array: string");
        zt_ok(extra->items[3].type == ZT_JBOOL && extra->items[3].b, "mixed array: bool");
        zt_ok(extra->items[4].type == ZT_JNULL, "mixed array: null");
    }
    const zt_truth_op *k = &t.ops[1];
    zt_ok(zt_truth_op_check(k, why, sizeof why), "kernel line complete (%s)", why);
    zt_is_str(k->launch, "indirect", "launch");
    zt_ok(k->groups[0] == 1 && k->groups[1] == 2 && k->groups[2] == 3, "groups");
    zt_ok(k->group_size[0] == 4 && k->group_size[1] == 5 && k->group_size[2] == 6, "group_size");
    zt_is_u64(k->signal, 0x30, "signal handle");
    zt_ok(k->nwaits == 1 && k->waits[0] == 0x31, "waits handles");
    zt_is_int(k->tid, -1, "negative tid");
    zt_ok(!zt_truth_op_check(c, why, 0) || 1, "check with no buffer does not crash");

    /* queries */
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    zt_is_int(zt_truth_count(&t, &q), 3, "empty query matches all");
    q.kind = "kernel";
    zt_is_int(zt_truth_count(&t, &q), 2, "by kind");
    q.name = "b";
    zt_is_int(zt_truth_count(&t, &q), 1, "by kind and name");
    zt_truth_query q2 = ZT_TRUTH_QUERY_INIT;
    q2.list = 0x20;
    zt_is_int(zt_truth_count(&t, &q2), 2, "by list");
    q2.device = 0;
    zt_is_int(zt_truth_count(&t, &q2), 1, "by list and device 0");
    zt_truth_query q3 = ZT_TRUTH_QUERY_INIT;
    q3.waits_on = 0x31;
    const zt_truth_op *f = zt_truth_find(&t, &q3);
    zt_ok(f == k, "find by waited event");
    q3.waits_on = 0x99;
    zt_ok(zt_truth_find(&t, &q3) == NULL, "find nothing");
    zt_truth_query q4 = ZT_TRUTH_QUERY_INIT;
    q4.immediate = 0;
    q4.exec = 3;
    zt_is_int(zt_truth_count(&t, &q4), 2, "by immediate and exec");

    zt_truth_sel s;
    zt_is_int(zt_truth_select(&t, NULL, &s), 0, "select all");
    zt_truth_sel_sort(&s, ZT_BY_HOST_START);
    zt_ok(s.n == 3 && s.ops[0]->seq == 1 && s.ops[1]->seq == 2 && s.ops[2]->seq == 0,
          "sort by host_start, ties by seq");
    zt_truth_sel_sort(&s, ZT_BY_SEQ);
    zt_ok(s.ops[0]->seq == 0 && s.ops[1]->seq == 1 && s.ops[2]->seq == 2, "sort by seq");
    zt_truth_sel_free(&s);
    zt_truth_sel_free(&s);
    zt_truth_select(&t, &q2, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    zt_ok(s.n == 1 && s.ops[0] == k, "select by query");
    zt_truth_sel_free(&s);
    zt_truth_free(&t);
}

static void test_misc(void)
{
    char out[64];
    zt_is_int(zt_truth_expand_path("/t/x-%p-%r.jsonl", 42, 3, out, sizeof out), 0, "expand");
    zt_is_str(out, "/t/x-42-3.jsonl", "%%p and %%r expanded");
    zt_truth_expand_path("a%%p%q", 1, 2, out, sizeof out);
    zt_is_str(out, "a%p%q", "%%%% and unknown sequences");
    zt_is_int(zt_truth_expand_path("%p%p%p", 123456789, 0, out, 8), -1, "too small");
    zt_is_u64(zt_truth_handle("0xFFFFFFFFFFFFFFFF"), UINT64_MAX, "handle parse");
    zt_is_u64(zt_truth_handle(NULL), 0, "null handle");

    zt_truth t;
    char err[128] = "";
    zt_is_int(zt_truth_load("/nonexistent/truth.jsonl", 0, &t, err, sizeof err), -1,
              "missing file is an error (%s)", err);
    zt_is_int(zt_truth_parse("", 0, 0, &t, err, sizeof err), 0, "empty text is fine");
    zt_is_int(t.nops + t.ndevices, 0, "and empty");
    zt_truth_free(&t);

    /* round trip through a file, without a trailing newline, with a huge number */
    char path[] = "/tmp/zt_truth_unitXXXXXX";
    int fd = mkstemp(path);
    const char *txt = "{\"kind\":\"barrier\",\"seq\":18446744073709551615,\"v\":-9223372036854775808,"
                      "\"w\":18446744073709551616,\"x\":123456789012345678901234567890}";
    ssize_t wr = write(fd, txt, strlen(txt));
    close(fd);
    zt_ok(wr == (ssize_t)strlen(txt), "temp file written");
    zt_is_int(zt_truth_load(path, 0, &t, err, sizeof err), 0, "load file (%s)", err);
    unlink(path);
    zt_is_int(t.nops, 1, "one op");
    if (t.nops == 1) {
        zt_is_u64(t.ops[0].seq, UINT64_MAX, "seq UINT64_MAX exact");
        const zt_jvalue *v = zt_jobject_get(t.ops[0].raw, "v");
        zt_ok(v && v->is_int && v->i == INT64_MIN, "INT64_MIN exact");
        const zt_jvalue *w = zt_jobject_get(t.ops[0].raw, "w");
        zt_ok(w && !w->is_int && w->d > 1.8e19, "2^64 becomes a double");
        char why[128] = "";
        zt_ok(!zt_truth_op_check(&t.ops[0], why, sizeof why), "incomplete op detected (%s)",
              why);
    }
    zt_truth_free(&t);
}

static void test_spirv(void)
{
    /* The generated SPIR-V must be well formed; spirv-val checks it when available. */
    uint32_t w[1024];
    size_t n = zt_spirv_build(zt_spv_builtins, 4, w, 1024);
    zt_ok(n > 20, "SPIR-V generated (%zu words)", n);
    zt_is_u64(w[0], 0x07230203u, "SPIR-V magic");
    uint32_t small[10];
    zt_is_int(zt_spirv_build(zt_spv_builtins, 4, small, 10), 0, "too small buffer detected");
    if (access("/usr/bin/spirv-val", X_OK) != 0) {
        zt_diag("spirv-val not installed: validation skipped");
        return;
    }
    char path[] = "/tmp/zt_spvXXXXXX";
    int fd = mkstemp(path);
    ssize_t wr = write(fd, w, n * 4);
    close(fd);
    zt_ok(wr == (ssize_t)(n * 4), "written");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "/usr/bin/spirv-val --target-env opencl1.2 %s", path);
    int st = system(cmd);
    zt_ok(st == 0, "spirv-val accepts the module (status %d)", st);
    unlink(path);
}

int main(void)
{
    test_strict_rejects();
    test_devices();
    test_ops();
    test_misc();
    test_spirv();
    return zt_done();
}
