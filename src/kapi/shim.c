// SPDX-License-Identifier: GPL-2.0
/*
 * The part of zram_rs that has to be C: things that exist only as C macros or static inlines
 * with no exported function behind them. Each is a one-line wrapper; all logic is in Rust.
 */
#include <asm/cacheflush.h>
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/part_stat.h>
#include <linux/preempt.h>
#include <linux/rwsem.h>
#include <linux/sched/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include "lock_classes.h"

/* MODULE_VERSION() is a macro (a .modinfo entry); the version comes from the Kbuild file. */
MODULE_VERSION(ZRAM_RS_VERSION);

/* module_param() is a macro that places a struct kernel_param in the __param section. */
static unsigned int num_devices = 1;
module_param(num_devices, uint, 0);
MODULE_PARM_DESC(num_devices, "Number of pre-created zram devices");

unsigned int zram_rs_num_devices_param(void);
unsigned int zram_rs_num_devices_param(void)
{
	return num_devices;
}

#ifdef CONFIG_DEBUG_ATOMIC_SLEEP
void zram_rs_might_sleep(void);
void zram_rs_might_sleep(void)
{
	might_sleep();
}
#endif

/*
 * wait_var_event() is a macro (its condition is evaluated between queueing and sleeping): sleeps
 * uninterruptibly while `lock` is set in *word, setting `waiters` there each time it finds it set.
 */
void zram_rs_wait_var_bit(atomic_t *word, int lock, int waiters);
void zram_rs_wait_var_bit(atomic_t *word, int lock, int waiters)
{
	wait_var_event(word, !(atomic_read(word) & lock) || !(atomic_fetch_or(waiters, word) & lock));
}

unsigned int zram_rs_this_cpu(void);
unsigned int zram_rs_this_cpu(void)
{
	return raw_smp_processor_id();
}

/*
 * blk_alloc_disk() is a macro: it declares the lockdep class key of the disk's queue at its
 * call site, here, for every zram_rs disk.
 */
struct gendisk *zram_rs_blk_alloc_disk(struct queue_limits *lim, int node);
struct gendisk *zram_rs_blk_alloc_disk(struct queue_limits *lim, int node)
{
	return blk_alloc_disk(lim, node);
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

/* part_stat_set_all() (a static inline): zeroes a disk's I/O statistics, as C zram's reset. */
void zram_rs_part_stat_clear(struct gendisk *disk);
void zram_rs_part_stat_clear(struct gendisk *disk)
{
	part_stat_set_all(disk->part0, 0);
}

/*
 * flush_dcache_page() after the driver wrote to a page cache page. On x86_64 it is an empty
 * inline that the Rust side skips (checked here); arm64 exports it and is called directly.
 */
#ifdef CONFIG_X86_64
static_assert(!ARCH_IMPLEMENTS_FLUSH_DCACHE_PAGE);
#endif
void zram_rs_flush_dcache_page(struct page *page);
void zram_rs_flush_dcache_page(struct page *page)
{
	flush_dcache_page(page);
}

struct zram_rs_work {
	struct work_struct work;
	void (*fn)(void *arg);
	void *arg;
};

static void zram_rs_work_fn(struct work_struct *work)
{
	struct zram_rs_work *w = container_of(work, struct zram_rs_work, work);

	w->fn(w->arg);
}

/*
 * Runs fn(arg) in a worker of system_unbound_wq and returns once it has returned: for a thread
 * inside a driver's submit_bio, which must not wait there for a bio of its own. An on-stack
 * work item (INIT_WORK_ONSTACK is a macro), as C zram's read_from_bdev_sync(); nothing is
 * allocated, and flush_work() returns only after fn has.
 */
void zram_rs_run_in_worker(void (*fn)(void *arg), void *arg);
void zram_rs_run_in_worker(void (*fn)(void *arg), void *arg)
{
	struct zram_rs_work w = { .fn = fn, .arg = arg };

	INIT_WORK_ONSTACK(&w.work, zram_rs_work_fn);
	queue_work(system_unbound_wq, &w.work);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
}

/* init_completion() is a static inline (its wait queue's lock class is a static key). */
void zram_rs_init_completion(struct completion *done);
void zram_rs_init_completion(struct completion *done)
{
	init_completion(done);
}

/* cond_resched() is a macro whose target depends on the preemption model. */
void zram_rs_cond_resched(void);
void zram_rs_cond_resched(void)
{
	cond_resched();
}

/*
 * debugfs: static inlines without CONFIG_DEBUG_FS, and on 7.x debugfs_create_file() is a
 * _Generic macro. Errors come back as ERR_PTR values, as from the kernel's functions.
 */
struct dentry *zram_rs_debugfs_create_dir(const char *name, struct dentry *parent);
struct dentry *zram_rs_debugfs_create_dir(const char *name, struct dentry *parent)
{
	return debugfs_create_dir(name, parent);
}

struct dentry *zram_rs_debugfs_create_file(const char *name, umode_t mode, struct dentry *parent,
					   void *data, const struct file_operations *fops);
struct dentry *zram_rs_debugfs_create_file(const char *name, umode_t mode, struct dentry *parent,
					   void *data, const struct file_operations *fops)
{
	return debugfs_create_file(name, mode, parent, data, fops);
}

void zram_rs_debugfs_remove(struct dentry *dentry);
void zram_rs_debugfs_remove(struct dentry *dentry)
{
	debugfs_remove(dentry);
}

/* INIT_WORK() is a macro (with a lock class key per call site under lockdep). */
void zram_rs_init_work(struct work_struct *work, work_func_t fn);
void zram_rs_init_work(struct work_struct *work, work_func_t fn)
{
	INIT_WORK(work, fn);
}

/*
 * The module's workqueue for decompressions deferred to the end of a backing-device read:
 * high priority as C zram's (system_highpri_wq), unbound, with a rescuer (WQ_MEM_RECLAIM) since swap-in
 * may wait on it under memory pressure, and destroyed, after draining, when the module goes.
 * alloc_workqueue() is a macro on 7.x; queue_work() is a static inline.
 */
static struct workqueue_struct *zram_rs_wq;

int zram_rs_wq_create(void);
int zram_rs_wq_create(void)
{
	/* Unbound: 7.x wants per-CPU or unbound said, and only 7.x has WQ_PERCPU. */
	zram_rs_wq = alloc_workqueue("zram_rs", WQ_UNBOUND | WQ_HIGHPRI | WQ_MEM_RECLAIM, 0);
	return zram_rs_wq ? 0 : -ENOMEM;
}

void zram_rs_wq_destroy(void);
void zram_rs_wq_destroy(void)
{
	destroy_workqueue(zram_rs_wq);
	zram_rs_wq = NULL;
}

void zram_rs_wq_queue(struct work_struct *work);
void zram_rs_wq_queue(struct work_struct *work)
{
	queue_work(zram_rs_wq, work);
}

/* bio_inc_remaining() is a static inline. */
void zram_rs_bio_inc_remaining(struct bio *bio);
void zram_rs_bio_inc_remaining(struct bio *bio)
{
	bio_inc_remaining(bio);
}

/* memalloc_noio_save() and _restore() are static inlines. */
unsigned int zram_rs_noio_save(void);
unsigned int zram_rs_noio_save(void)
{
	return memalloc_noio_save();
}

void zram_rs_noio_restore(unsigned int flags);
void zram_rs_noio_restore(unsigned int flags)
{
	memalloc_noio_restore(flags);
}

/* init_rwsem() is a macro with a static lock class key: one class for every device's init_lock. */
void zram_rs_init_rwsem(struct rw_semaphore *sem);
void zram_rs_init_rwsem(struct rw_semaphore *sem)
{
	static struct lock_class_key key;

	__init_rwsem(sem, "Zram::init_lock", &key);
}

struct page *zram_rs_virt_to_page(void *addr);
struct page *zram_rs_virt_to_page(void *addr)
{
	return virt_to_page(addr);
}

#ifdef CONFIG_DEBUG_LOCK_ALLOC
/* One lock class for every slot lock of every device (as C zram upstream's slot locks). */
static struct lock_class_key zram_rs_slot_key;
/* One lock class for the places of every compression stream pool. */
static struct lock_class_key zram_rs_stream_key;
/* One lock class for the places of every decompression context pool. */
static struct lock_class_key zram_rs_reader_key;

/* A map of lock class `class` (lock_classes.h), or NULL. */
struct lockdep_map *zram_rs_lock_map_new(int class);
struct lockdep_map *zram_rs_lock_map_new(int class)
{
	struct lockdep_map *map;

	if (class != ZRAM_RS_LOCK_SLOT && class != ZRAM_RS_LOCK_STREAM &&
	    class != ZRAM_RS_LOCK_READER)
		return NULL;
	map = kzalloc(sizeof(*map), GFP_KERNEL);
	if (!map)
		return NULL;
	if (class == ZRAM_RS_LOCK_STREAM)
		/* A stream is held across sleeping work (allocations, other locks): a mutex's. */
		lockdep_init_map_wait(map, "zram_rs stream", &zram_rs_stream_key, 0, LD_WAIT_SLEEP);
	else if (class == ZRAM_RS_LOCK_READER)
		/* A decompression context is held across a slot lock's wait: a mutex's. */
		lockdep_init_map_wait(map, "zram_rs reader", &zram_rs_reader_key, 0, LD_WAIT_SLEEP);
	else
		/*
		 * A slot lock's holder may sleep (in zsmalloc's locks on PREEMPT_RT) and its
		 * waiters do: a mutex's wait type, as C zram 7.3's slot lock.
		 */
		lockdep_init_map_wait(map, "zram_rs slot", &zram_rs_slot_key, 0, LD_WAIT_SLEEP);
	return map;
}

void zram_rs_lock_map_free(struct lockdep_map *map);
void zram_rs_lock_map_free(struct lockdep_map *map)
{
	kfree(map);
}

/*
 * An exclusive acquisition (what spin_acquire() and mutex_acquire() both are; the class's
 * wait type tells a slot lock from a stream).
 */
void zram_rs_lock_map_acquire(struct lockdep_map *map, int trylock);
void zram_rs_lock_map_acquire(struct lockdep_map *map, int trylock)
{
	lock_acquire_exclusive(map, 0, trylock, NULL, _RET_IP_);
}

void zram_rs_lock_map_release(struct lockdep_map *map);
void zram_rs_lock_map_release(struct lockdep_map *map)
{
	lock_release(map, _RET_IP_);
}
#endif
