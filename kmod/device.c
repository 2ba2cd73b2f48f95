// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/pbtrace: a reader attaches one fd to one session buffer, maps it
 * read-only, and takes/returns sealed chunks with ioctls. Each fd remembers
 * the chunks it holds so a reader that dies gives them back unread.
 */
#include <linux/bitmap.h>
#include <linux/capability.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "pbtrace.h"
#include "compat.h"

/*
 * ioctls of one fd serialize on @lock. mmap() must not take it: it runs
 * under mmap_lock, and the ioctls fault on user memory (mmap_lock) while
 * holding it. So ATTACH publishes @b last, with release semantics, and
 * mmap/poll only read @b (acquire) and what was set before it.
 */
struct pbt_fd {
	struct mutex lock;
	struct pbt_session *s;		/* our reference, after ATTACH */
	struct pbt_buffer *b;		/* set once, last */
	unsigned long *held;		/* chunks handed out and not put */
	u32 nr_chunks;
	u32 buffer;			/* index of b in the session */
};

static struct pbt_buffer *attached(struct pbt_fd *f)
{
	/* Pairs with the release in do_attach(): f->s is set too. */
	return smp_load_acquire(&f->b);
}

static int pbt_open(struct inode *inode, struct file *file)
{
	struct pbt_fd *f;

	if (!capable(CAP_SYS_ADMIN) && !capable(CAP_PERFMON))
		return -EPERM;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	mutex_init(&f->lock);
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int pbt_release(struct inode *inode, struct file *file)
{
	struct pbt_fd *f = file->private_data;
	u32 i;

	if (f->b) {
		for_each_set_bit(i, f->held, f->nr_chunks)
			pbt_buffer_unget_chunk(f->b, i);
		pbt_session_detach(f->s, f->b);
	}
	bitmap_free(f->held);
	pbt_session_put(f->s);
	kfree(f);
	return 0;
}

static long do_attach(struct pbt_fd *f, void __user *uarg)
{
	struct pbtrace_attach at;
	struct pbt_session *s = NULL;
	struct pbt_buffer *b;
	size_t size;

	if (copy_from_user(&at, uarg, sizeof(at)))
		return -EFAULT;
	if (f->b)
		return -EBUSY;
	/* Counted as the buffer's reader: SET_SESSION retires, never frees it. */
	b = pbt_session_attach(at.session_id, at.buffer, &s);
	if (IS_ERR(b))
		return PTR_ERR(b);
	f->nr_chunks = pbt_buffer_nr_chunks(b);
	f->held = bitmap_zalloc(f->nr_chunks, GFP_KERNEL);
	if (!f->held) {
		pbt_session_detach(s, b);
		pbt_session_put(s);
		return -ENOMEM;
	}
	f->s = s;
	f->buffer = at.buffer;
	/* Release: mmap/poll that see f->b see f->s and f->held too. */
	smp_store_release(&f->b, b);
	pbt_buffer_vmem(f->b, &size);
	at.mmap_size = size;
	if (copy_to_user(uarg, &at, sizeof(at)))
		return -EFAULT;
	return 0;
}

static long do_get_chunk(struct pbt_fd *f, void __user *uarg)
{
	struct pbtrace_chunk_req req = {};
	int ret;

	if (!f->b)
		return -ENODEV;
	if (pbt_buffer_retired(f->b))
		return -ESTALE;
	ret = pbt_buffer_get_chunk(f->b, &req);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &req, sizeof(req))) {
		pbt_buffer_unget_chunk(f->b, req.index);
		return -EFAULT;
	}
	set_bit(req.index, f->held);
	return 0;
}

static long do_put_chunk(struct pbt_fd *f, void __user *uarg)
{
	struct pbtrace_chunk_req req;
	int ret;

	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (!f->b)
		return -ENODEV;
	/* Only a chunk this fd holds: never trust the index blindly. */
	if (req.index >= f->nr_chunks || !test_bit(req.index, f->held))
		return -EINVAL;
	ret = pbt_buffer_put_chunk(f->b, req.index);
	if (!ret)
		clear_bit(req.index, f->held);
	return ret;
}

/* Relayed machines' records for this buffer (remote.c). */
static long do_read_remote(struct pbt_fd *f, void __user *uarg)
{
	struct pbtrace_remote_read rr;
	long ret;

	if (copy_from_user(&rr, uarg, sizeof(rr)))
		return -EFAULT;
	if (!f->b)
		return -ENODEV;
	/* f->buffer now names a buffer SET_SESSION put in its place. */
	if (pbt_buffer_retired(f->b))
		return -ESTALE;
	if (rr.size < PBTRACE_REMOTE_READ_MIN)
		return -EINVAL;
	ret = pbt_remote_read(f->s, f->buffer, u64_to_user_ptr(rr.buf),
			      rr.size, &rr);
	if (ret)
		return ret;
	if (copy_to_user(uarg, &rr, sizeof(rr)))
		return -EFAULT;
	return 0;
}

/* The path of a file a stack sample of this buffer pinned (stack.c). */
static long do_mapping_path(struct pbt_fd *f, void __user *uarg)
{
	struct pbtrace_mapping_path mp;
	char *buf, *path;
	size_t n;
	long ret;

	if (copy_from_user(&mp, uarg, sizeof(mp)))
		return -EFAULT;
	if (!f->b)
		return -ENODEV;
	if (!mp.size)
		return -EINVAL;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = pbt_stack_file_path(f->b, MKDEV(mp.dev_major, mp.dev_minor),
				  mp.ino, buf, PATH_MAX, &path);
	if (ret)
		goto out;
	n = strlen(path);
	ret = -ENAMETOOLONG;
	if (n >= mp.size)
		goto out;
	mp.len = n;
	ret = -EFAULT;
	if (!copy_to_user(u64_to_user_ptr(mp.buf), path, n + 1) &&
	    !copy_to_user(uarg, &mp, sizeof(mp)))
		ret = 0;
out:
	kfree(buf);
	return ret;
}

/*
 * Taking chunks (and relayed records) consumes them: traced's data. Only
 * an opener with CAP_SYS_ADMIN may; CAP_PERFMON may attach and map, i.e.
 * look. The opener's credentials count, not the caller's, so an fd handed
 * to a less privileged process keeps what it was opened with.
 */
static bool may_consume(struct file *file, unsigned int cmd)
{
	if (cmd != PBTRACE_IOC_GET_CHUNK && cmd != PBTRACE_IOC_PUT_CHUNK &&
	    cmd != PBTRACE_IOC_READ_REMOTE && cmd != PBTRACE_IOC_MAPPING_PATH)
		return true;
	return file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
}

static long pbt_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pbt_fd *f = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	if (!may_consume(file, cmd))
		return -EPERM;
	mutex_lock(&f->lock);
	switch (cmd) {
	case PBTRACE_IOC_ATTACH:
		ret = do_attach(f, uarg);
		break;
	case PBTRACE_IOC_GET_CHUNK:
		ret = do_get_chunk(f, uarg);
		break;
	case PBTRACE_IOC_PUT_CHUNK:
		ret = do_put_chunk(f, uarg);
		break;
	case PBTRACE_IOC_READ_REMOTE:
		ret = do_read_remote(f, uarg);
		break;
	case PBTRACE_IOC_MAPPING_PATH:
		ret = do_mapping_path(f, uarg);
		break;
	default:
		ret = -ENOTTY;
	}
	mutex_unlock(&f->lock);
	return ret;
}

static int pbt_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pbt_buffer *b = attached(file->private_data);
	unsigned long len = vma->vm_end - vma->vm_start, off;
	size_t size;
	void *mem;
	int ret;

	if (!b)
		return -ENODEV;
	/* Read-only, now and forever: no PROT_WRITE, no mprotect later. */
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	mem = pbt_buffer_vmem(b, &size);
	/* MAP_SHARED of an O_RDONLY fd has VM_MAYSHARE but not VM_SHARED. */
	if (!(vma->vm_flags & VM_MAYSHARE) || vma->vm_pgoff || len != size)
		return -EINVAL;
	pbt_vm_flags_clear(vma, VM_MAYWRITE);
	pbt_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * Page by page, as remap_vmalloc_range() does: it wants VM_USERMAP,
	 * which only vmalloc_user() sets, and that cannot charge the
	 * session's memcg (buffer.c zeroes the area instead).
	 */
	for (off = 0; off < len; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(mem + off));
		if (ret)
			return ret;
	}
	return 0;
}

static __poll_t pbt_poll(struct file *file, poll_table *wait)
{
	struct pbt_fd *f = file->private_data;
	struct pbt_buffer *b = attached(f);
	struct pbt_session *s;
	__poll_t mask = 0;

	if (!b)
		return EPOLLERR;
	s = f->s;
	poll_wait(file, &s->wq, wait);
	/* Replaced by SET_SESSION: attach again to the session's new one. */
	if (pbt_buffer_retired(b))
		return EPOLLERR;
	if (pbt_remote_readable(s, f->buffer))
		mask = EPOLLIN | EPOLLRDNORM;
	if (pbt_buffer_has_sealed(b))
		return EPOLLIN | EPOLLRDNORM;
	/*
	 * Stopped, or destroyed (off the registry) before it ever started,
	 * and no relayed machine of this buffer will send more: records
	 * still queued keep EPOLLIN up until READ_REMOTE says EOF.
	 */
	if ((READ_ONCE(s->state) == PBTRACE_STATE_STOPPED ||
	     list_empty_careful(&s->node)) && pbt_remote_done(s, f->buffer))
		mask |= EPOLLHUP;
	return mask;
}

static const struct file_operations pbt_fops = {
	.owner = THIS_MODULE,
	.open = pbt_open,
	.release = pbt_release,
	.unlocked_ioctl = pbt_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = pbt_mmap,
	.poll = pbt_poll,
	/*
	 * No .llseek: lseek() then fails with -ESPIPE on every kernel, as
	 * no_llseek did (it is NULL from 6.0 and gone in 6.12).
	 */
};

static struct miscdevice pbt_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = PBTRACE_DEVICE_NAME,
	.fops = &pbt_fops,
	.mode = 0600,
};

int pbt_device_init(void)
{
	return misc_register(&pbt_misc);
}

void pbt_device_exit(void)
{
	misc_deregister(&pbt_misc);
}
