// SPDX-License-Identifier: GPL-2.0
/*
 * insn_count: a QEMU TCG plugin that counts the instructions the guest executes, per
 * translation block, and writes them out in phases. A phase ends whenever the guest starts
 * executing the block at the marker address (`make bench` passes the kernel's sync(2) entry,
 * so a `sync` in the guest closes one phase and opens the next). Unlike timings under TCG,
 * these counts do not depend on the host: the same guest work gives the same numbers.
 *
 * Arguments: marker=<hex guest address>,out=<file>[,inline=off]. By default the counts are
 * added by code QEMU inlines into each block; inline=off counts with a call per block
 * instead, slower, but the only way that works under -icount (QEMU 10.0's inline counters
 * break the guest there).
 * Output, per phase: "PHASE <n>", then "<block address> <instructions in block> <executions>"
 * (hex, decimal, decimal) for every block executed during the phase.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t address;
	uint64_t instructions;
	/* Executions already written out in earlier phases. */
	uint64_t reported;
	struct qemu_plugin_scoreboard *executions;
};

/* Open addressing; a guest runs far fewer distinct blocks than this. */
#define TABLE_BITS 21
#define TABLE_SIZE (1u << TABLE_BITS)
static struct block *table[TABLE_SIZE];
static uint32_t blocks;
static uint64_t marker;
static bool counted_inline = true;
static FILE *out;
static unsigned int phase;
/* vCPU threads translate concurrently under multi-threaded TCG. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t hash(uint64_t address, uint64_t instructions)
{
	return ((address ^ (instructions << 48)) * 0x9e3779b97f4a7c15ull) >> (64 - TABLE_BITS);
}

/* Called with `lock` held. */
static struct block *block_of(uint64_t address, uint64_t instructions)
{
	for (uint32_t i = hash(address, instructions);; i = (i + 1) & (TABLE_SIZE - 1)) {
		struct block *b = table[i];

		if (!b) {
			if (blocks == TABLE_SIZE / 2) {
				fprintf(stderr, "insn_count: too many blocks\n");
				exit(1);
			}
			b = calloc(1, sizeof(*b));
			if (!b) {
				fprintf(stderr, "insn_count: out of memory\n");
				exit(1);
			}
			b->address = address;
			b->instructions = instructions;
			b->executions = qemu_plugin_scoreboard_new(sizeof(uint64_t));
			table[i] = b;
			blocks++;
			return b;
		}
		if (b->address == address && b->instructions == instructions)
			return b;
	}
}

static void write_phase(void)
{
	pthread_mutex_lock(&lock);
	fprintf(out, "PHASE %u\n", phase++);
	for (uint32_t i = 0; i < TABLE_SIZE; i++) {
		struct block *b = table[i];
		uint64_t n;

		if (!b)
			continue;
		n = qemu_plugin_u64_sum(qemu_plugin_scoreboard_u64(b->executions));
		if (n != b->reported)
			fprintf(out, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", b->address,
				b->instructions, n - b->reported);
		b->reported = n;
	}
	fflush(out);
	pthread_mutex_unlock(&lock);
}

static void block_executed(unsigned int vcpu, void *data)
{
	struct block *b = data;

	qemu_plugin_u64_add(qemu_plugin_scoreboard_u64(b->executions), vcpu, 1);
}

static void marker_reached(unsigned int vcpu, void *data)
{
	write_phase();
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t address = qemu_plugin_tb_vaddr(tb);
	struct block *b;

	pthread_mutex_lock(&lock);
	b = block_of(address, qemu_plugin_tb_n_insns(tb));
	pthread_mutex_unlock(&lock);

	if (counted_inline)
		qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(
			tb, QEMU_PLUGIN_INLINE_ADD_U64,
			qemu_plugin_scoreboard_u64(b->executions), 1);
	else
		qemu_plugin_register_vcpu_tb_exec_cb(tb, block_executed, QEMU_PLUGIN_CB_NO_REGS,
						     b);
	if (address == marker)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, marker_reached, QEMU_PLUGIN_CB_NO_REGS,
						     NULL);
}

static void finished(qemu_plugin_id_t id, void *data)
{
	write_phase();
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *file = NULL;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "marker=", 7))
			marker = strtoull(argv[i] + 7, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			file = argv[i] + 4;
		else if (!strcmp(argv[i], "inline=off"))
			counted_inline = false;
	}
	if (!file || !marker) {
		fprintf(stderr, "insn_count: needs marker=<hex address>,out=<file>[,inline=off]\n");
		return -1;
	}
	out = fopen(file, "w");
	if (!out) {
		perror(file);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	qemu_plugin_register_atexit_cb(id, finished, NULL);
	return 0;
}
