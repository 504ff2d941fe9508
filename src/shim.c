// SPDX-License-Identifier: GPL-2.0
/*
 * The part of zram_rs that has to be C: things that exist only as C macros or static inlines
 * with no exported function behind them. Each is a one-line wrapper; all logic is in Rust.
 */
#include <linux/blkdev.h>
#include <linux/cpumask.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/smp.h>

/* module_param() is a macro that places a struct kernel_param in the __param section. */
static unsigned int num_devices = 1;
module_param(num_devices, uint, 0);
MODULE_PARM_DESC(num_devices, "Number of pre-created zram devices");

unsigned int zram_rs_num_devices_param(void);
unsigned int zram_rs_num_devices_param(void)
{
	return num_devices;
}

void zram_rs_preempt_disable(void);
void zram_rs_preempt_disable(void)
{
	preempt_disable();
}

void zram_rs_preempt_enable(void);
void zram_rs_preempt_enable(void)
{
	preempt_enable();
}

unsigned int zram_rs_this_cpu(void);
unsigned int zram_rs_this_cpu(void)
{
	return raw_smp_processor_id();
}

unsigned int zram_rs_disk_openers(struct gendisk *disk);
unsigned int zram_rs_disk_openers(struct gendisk *disk)
{
	return disk_openers(disk);
}

void zram_rs_lock_open_mutex(struct gendisk *disk);
void zram_rs_lock_open_mutex(struct gendisk *disk)
{
	mutex_lock(&disk->open_mutex);
}

void zram_rs_unlock_open_mutex(struct gendisk *disk);
void zram_rs_unlock_open_mutex(struct gendisk *disk)
{
	mutex_unlock(&disk->open_mutex);
}

unsigned int zram_rs_num_online_cpus(void);
unsigned int zram_rs_num_online_cpus(void)
{
	return num_online_cpus();
}
