# execq: a Redis-queue command-execution worker.  See README.md.
PKGS      = hiredis libevent libevent_openssl openssl jansson libseccomp
BUILD    ?= build
VERSION   = 0.2.0
PREFIX   ?= /usr/local
BINDIR    = $(PREFIX)/bin
# GNU: /etc for a PREFIX of /usr (cron, logrotate and systemd read /etc).
SYSCONFDIR ?= $(if $(filter /usr /usr/,$(PREFIX)),/etc,$(PREFIX)/etc)
LOCALSTATEDIR ?= /var
MANDIR   ?= $(PREFIX)/share/man
DOCDIR   ?= $(PREFIX)/share/doc/execq
UNITDIR  ?= $(PREFIX)/lib/systemd/system
WARN      = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wpointer-arith -Wwrite-strings -Wformat=2 \
            -Wno-missing-field-initializers
CFLAGS   ?= -O2 -g
CPPFLAGS += -I. -D_GNU_SOURCE -DEXECQ_VERSION='"$(VERSION)"' 
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CMOCKA_LIBS = $(shell pkg-config --libs cmocka 2>/dev/null)
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(SANITIZE) $(PKG_CFLAGS)
LDLIBS    += $(PKG_LIBS) -lutil -lm -lpthread
# The client runs no command: no libseccomp, no libutil.
CLIENT_LIBS = $(shell pkg-config --libs hiredis libevent libevent_openssl openssl jansson 2>/dev/null) -lm -lpthread

LOGS_SRC  = logs/log.c logs/xmalloc.c logs/clock.c logs/errcode.c logs/token.c logs/execlog.c logs/spare.c logs/syncer.c logs/tail.c logs/cleanup.c logs/display.c logs/utf8.c logs/netutil.c
POLICY_SRC = policy/shparse.c policy/cls_words.c policy/cls_path.c policy/cls_env.c \
            policy/cls_vars.c policy/cls_flow.c policy/cls_block.c policy/cls_table.c \
            policy/cls_git.c policy/cls_tools.c policy/cls_wrap.c policy/classify.c \
            policy/policyconf.c policy/decide.c policy/netaddr.c
# exec/ in two parts: what the client may link (the command's environment and
# cwd, the output cap, key names) and the boundary and the running command.
EXEC_PURE_SRC = exec/cmdenv.c exec/outbuf.c exec/keys.c
EXEC_SRC  = $(EXEC_PURE_SRC) exec/spawn.c exec/mountinfo.c exec/nsroot.c exec/rmtree.c \
            exec/cgroup.c exec/confine.c exec/exec.c
QUEUE_SRC = queue/item_field.c queue/item.c queue/item_process.c queue/item_json.c \
            queue/item_retry.c queue/rurl.c queue/spool.c queue/scripts.c queue/rconn.c \
            queue/sentinel.c queue/conn.c queue/reader.c queue/outbox.c \
            queue/queue.c queue/store.c queue/client.c queue/backlog.c \
            queue/cluster.c queue/shard.c
WORKER_SRC = worker/config_check.c worker/config_opts.c worker/config_value.c \
            worker/config_help.c worker/config_file.c worker/config_flags.c \
            worker/config_finish.c \
            worker/config.c worker/audit.c worker/approval.c worker/metrics.c \
            worker/status.c worker/live.c worker/http.c worker/session.c \
            worker/session_act.c worker/shell.c worker/waiting.c worker/holder.c \
            worker/job.c worker/admit.c worker/attempt.c worker/held.c worker/boundary.c \
            worker/publish.c worker/signals.c worker/proxy.c worker/direct.c \
            worker/worker.c
LIB_SRC   = $(LOGS_SRC) $(POLICY_SRC) $(EXEC_SRC) $(QUEUE_SRC) $(WORKER_SRC)
LIB_OBJ   = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The client links no worker object: what it shares with the worker
# (the policy, its config keys, the log tail, URLs) lives below worker/.
CLIENT_SRC = $(LOGS_SRC) $(POLICY_SRC) $(EXEC_PURE_SRC) $(QUEUE_SRC)
CLIENT_OBJ = $(CLIENT_SRC:%.c=$(BUILD)/obj/%.o)

WORKER_BIN = $(BUILD)/execq-worker
CLI_BIN    = $(BUILD)/execq
BENCH_BIN  = $(BUILD)/execq-bench
UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
INTEG_TESTS = $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(wildcard tests/integration/test_*.c))
TEST_SUPPORT = $(BUILD)/obj/tests/integration/harness.o \
    $(BUILD)/obj/tests/integration/proxy_world.o \
    $(BUILD)/obj/tests/integration/cluster_world.o

.PHONY: all deps run test unit integration asan bench install clean valgrind \
	fuzz faults ha packaging doccheck bench-fleet bench-cluster layout \
	tools-check \
	mcp-node

all: $(WORKER_BIN) $(CLI_BIN)

deps:
	@scripts/install-deps

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -MMD -MP -c -o $@ $<

$(WORKER_BIN): $(BUILD)/obj/worker/main.o $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

CLI_SRC   = cli/main.c cli/util.c cli/opts.c cli/clientconf.c cli/conn.c \
            cli/tokens.c cli/cmd_run.c cli/cmd_sessions.c cli/cmd_process.c \
            cli/cmd_logs.c cli/cmd_policy.c cli/cmd_workers.c cli/cmd_dead.c \
            cli/cmd_queues.c cli/tools.c \
            cli/cmd_tools.c cli/mcp_call.c cli/mcp.c cli/mcp_http.c \
            cli/cmd_mcp.c
CLI_OBJ   = $(CLI_SRC:%.c=$(BUILD)/obj/%.o)

# The tool definitions (cli/tools.json) go into the client as bytes that
# cli/tools.c includes: od writes them as "0x7b,0x0a,...", so the JSON
# stays the one readable source. test_tools links cli/tools.o too.
TOOLS_INC = $(BUILD)/gen/cli/tools_json.inc
$(TOOLS_INC): cli/tools.json
	@mkdir -p $(@D)
	od -An -v -tx1 cli/tools.json | \
	    sed -e 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g' > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/cli/tools.o: $(TOOLS_INC)
$(BUILD)/obj/cli/tools.o: CPPFLAGS += -I$(BUILD)/gen
$(BUILD)/tests/test_tools: $(BUILD)/obj/cli/tools.o

$(CLI_BIN): $(CLI_OBJ) $(CLIENT_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(CLIENT_LIBS)

$(BENCH_BIN): $(BUILD)/obj/scripts/bench.o $(LIB_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(CMOCKA_LIBS)

$(BUILD)/tests/test_%: $(BUILD)/obj/tests/integration/test_%.o $(TEST_SUPPORT) $(LIB_OBJ)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS) $(CMOCKA_LIBS)

# Unit tests need nothing but the binaries; integration tests get a private
# redis-server each (scripts/with-redis.sh) and drive the real worker binary.
unit: deps $(UNIT_TESTS)
	@set -e; for t in $(UNIT_TESTS); do echo "== $$t"; $$t; done

integration: deps all $(INTEG_TESTS) mcp-node
	@set -e; for t in $(INTEG_TESTS); do echo "== $$t"; \
	    EXECQ_TEST_BUILD=$(BUILD) scripts/with-redis.sh $$t; done

# The official MCP SDK (@modelcontextprotocol/sdk, from npm) for
# test_mcp's clients, tests/mcp/stdio-client.mjs and http-client.mjs, and
# the official conformance suite (@modelcontextprotocol/conformance,
# pinned: 0.1.11 runs on Node 20) for execq mcp --http: installed once
# into build/mcp-node (whatever BUILD is). Without node, npm or the
# network this says so loudly and test_mcp skips what needs them.
MCP_NODE = build/mcp-node
MCP_SDK  = $(MCP_NODE)/node_modules/@modelcontextprotocol/sdk/package.json
MCP_CONF = $(MCP_NODE)/node_modules/@modelcontextprotocol/conformance/package.json
mcp-node:
	@if [ -f $(MCP_SDK) ] && [ -f $(MCP_CONF) ]; then :; \
	elif ! command -v node >/dev/null 2>&1 || \
	    ! command -v npm >/dev/null 2>&1; then \
	    echo "*** mcp-node: node or npm missing: test_mcp will SKIP" \
	        "the MCP SDK clients ***"; \
	else mkdir -p $(MCP_NODE) && \
	    timeout 300 npm install --prefix $(MCP_NODE) --no-audit \
	        --no-fund --silent @modelcontextprotocol/sdk@1 \
	        @modelcontextprotocol/conformance@0.1.11 >/dev/null \
	        2>$(MCP_NODE)/npm.err || { cat $(MCP_NODE)/npm.err; \
	    echo "*** mcp-node: npm install @modelcontextprotocol/sdk" \
	        "@modelcontextprotocol/conformance failed (no network?):" \
	        "test_mcp will SKIP the MCP SDK clients ***"; }; fi

# The fault suite alone (also part of integration): Redis killed and
# restarted, OOM, a worker killed or frozen, a stop with Redis away.
faults: deps all $(BUILD)/tests/test_faults
	EXECQ_TEST_BUILD=$(BUILD) scripts/with-redis.sh $(BUILD)/tests/test_faults

# Failover on the real thing (also part of integration): a primary, a
# replica and three sentinels the test starts; SENTINEL FAILOVER under
# load, and a primary switched by hand (tests/integration/test_ha.c).
ha: deps all $(BUILD)/tests/test_ha
	EXECQ_TEST_BUILD=$(BUILD) scripts/with-redis.sh $(BUILD)/tests/test_ha

test: deps
	@$(MAKE) --no-print-directory all $(UNIT_TESTS) $(INTEG_TESTS) $(BENCH_BIN)
	@scripts/check-layout $(BUILD)
	@$(MAKE) --no-print-directory unit integration packaging doccheck \
	    tools-check

asan: deps
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g" \
	    SANITIZE="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	    test

valgrind: deps all $(UNIT_TESTS)
	@set -e; for t in $(UNIT_TESTS); do \
	    valgrind -q --error-exitcode=1 --leak-check=full $$t; done

# The shell parser and the classifier under libFuzzer with ASan+UBSan
# (clang), FUZZ_SECONDS each.
FUZZ_SECONDS ?= 120
FUZZ_CC = clang -std=gnu11 -g -O1 -I. -D_GNU_SOURCE \
    -fsanitize=fuzzer,address,undefined
fuzz: deps
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/corpus-classify
	$(FUZZ_CC) -o $(BUILD)/fuzz/fuzz_shparse tests/fuzz/fuzz_shparse.c \
	    policy/shparse.c logs/xmalloc.c logs/log.c
	$(FUZZ_CC) -o $(BUILD)/fuzz/fuzz_classify tests/fuzz/fuzz_classify.c \
	    policy/classify.c policy/policyconf.c policy/cls_*.c policy/shparse.c logs/xmalloc.c logs/log.c
	$(BUILD)/fuzz/fuzz_shparse -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=4096 $(BUILD)/fuzz/corpus || exit 1
	$(BUILD)/fuzz/fuzz_classify -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=4096 $(BUILD)/fuzz/corpus-classify $(BUILD)/fuzz/corpus \
	    || exit 1

run: deps all
	@scripts/run.sh

bench: deps all $(BENCH_BIN)
	@scripts/bench.sh

# One Redis, 8 workers on this host: the fleet ceiling's check.
bench-fleet: deps all $(BENCH_BIN)
	@BENCH_FLEET=1 scripts/bench.sh

# A three-primary Redis Cluster on this host next to one Redis: items/s
# and Redis CPU per shard (scripts/bench-cluster.sh).
bench-cluster: deps all $(BENCH_BIN)
	@scripts/bench-cluster.sh

# A real host: make install PREFIX=/usr, or SYSCONFDIR=/etc with the
# default PREFIX (cron and logrotate read only /etc; SYSCONFDIR is /etc
# for PREFIX=/usr, $(PREFIX)/etc otherwise). The cron file's PATH is
# BINDIR, /usr/bin, /bin, each once. Nothing existing is overwritten but
# the binaries, the man pages and the docs.
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DOCDIR) \
	    $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSCONFDIR)/execq \
	    $(DESTDIR)$(SYSCONFDIR)/logrotate.d $(DESTDIR)$(SYSCONFDIR)/cron.d
	install -d -m 0755 $(DESTDIR)$(LOCALSTATEDIR)/lib/execq/workspace
	install -d -m 0700 $(DESTDIR)$(LOCALSTATEDIR)/lib/execq/state
	install -d -m 0750 $(DESTDIR)$(LOCALSTATEDIR)/log/execq/exec
	install -m 0755 $(WORKER_BIN) $(CLI_BIN) $(DESTDIR)$(BINDIR)/
	install -m 0644 docs/man/execq.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 docs/man/execq-worker.8 $(DESTDIR)$(MANDIR)/man8/
	install -m 0644 README.md docs/PROTOCOL.md docs/CONFIG.md \
	    docs/SCALING.md docs/TOOLS.md docs/MCP.md docs/worker.json.example \
	    $(DESTDIR)$(DOCDIR)/
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    scripts/execq-worker.service > $(DESTDIR)$(UNITDIR)/execq-worker.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/execq-worker.service
	test -e $(DESTDIR)$(SYSCONFDIR)/execq/worker.json || \
	    install -m 0600 docs/worker.json.example \
	    $(DESTDIR)$(SYSCONFDIR)/execq/worker.json
	test -e $(DESTDIR)$(SYSCONFDIR)/logrotate.d/execq || \
	    install -m 0644 scripts/execq.logrotate \
	    $(DESTDIR)$(SYSCONFDIR)/logrotate.d/execq
	test -e $(DESTDIR)$(SYSCONFDIR)/cron.d/execq-cleanup || \
	    sed -e 's|^PATH=.*|PATH=$(subst $() ,:,$(strip $(BINDIR) \
	    $(filter-out $(BINDIR),/usr/bin /bin)))|' \
	    scripts/execq-cleanup.cron \
	    > $(DESTDIR)$(SYSCONFDIR)/cron.d/execq-cleanup

# The house's rules, read from the objects: no circle between files, rooms
# that depend one way, a client that runs nothing, Redis and Lua in queue/.
layout: all
	@scripts/check-layout $(BUILD)

# Every example of README.md and docs/PROTOCOL.md, run against a private
# Redis and worker (scripts/doccheck --help).
doccheck: deps all
	@scripts/doccheck $(BUILD)

# What `execq tools` prints is JSON in each shape; each inputSchema is a
# valid 2020-12 schema (when python3's jsonschema is there to say so).
tools-check: all
	@set -e; for f in mcp openai anthropic; do \
	    $(CLI_BIN) tools --format $$f | python3 -m json.tool >/dev/null; \
	done; echo "tools: mcp, openai and anthropic print valid JSON"
	@if python3 -c 'import jsonschema' 2>/dev/null; then \
	    $(CLI_BIN) tools --format mcp | python3 -c 'import json, sys; \
	    from jsonschema import Draft202012Validator as V; \
	    [V.check_schema(t["inputSchema"]) for t in json.load(sys.stdin)["tools"]]' && \
	    echo "tools: each inputSchema is valid JSON Schema 2020-12"; \
	else echo "tools: python3 jsonschema missing: schemas not checked"; fi

# The packaging files: man pages (groff, mandoc), the unit
# (systemd-analyze), logrotate; and make install into a temp DESTDIR, for
# PREFIX=/usr and the default PREFIX (scripts/check-packaging.sh).
packaging: all
	@MAKE='$(MAKE)' scripts/check-packaging.sh $(BUILD)

clean:
	rm -rf build build-asan .tmp

.SECONDARY:

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
