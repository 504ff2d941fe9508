// SPDX-License-Identifier: GPL-2.0
//! debugfs: directories, removed with what they hold on drop, each keeping its parent until
//! then; and read-only files of records ([`RecordsDir`]), whose reads a [`Records`]
//! implementation serves with the file position counting records rather than bytes (as C
//! zram's `block_state`), through one static table of file operations owned by the module.
//! Without debugfs, or when it fails, nothing is created and nothing is reported (as C).

use super::ffi;
use kernel::alloc::flags::GFP_KERNEL;
use kernel::alloc::KVVec;
use kernel::bindings;
use kernel::ffi::{c_char, c_void};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;
use kernel::uaccess::{UserPtr, UserSlice};

/// The most a read fills at once (C fills the whole count; a short read is as good to readers
/// and spares a large allocation).
const MAX_READ: usize = 64 * bindings::PAGE_SIZE;

/// A source of text records for a debugfs file.
pub(crate) trait Records: Send + Sync {
    /// Writes whole records into `out`, from record `*pos` on, advancing `*pos` past each
    /// record written or skipped; a record that does not fit with a byte to spare ends the
    /// read. Returns the bytes written.
    fn read_records(&self, pos: &mut i64, out: &mut [u8]) -> Result<usize>;
}

/// A debugfs directory.
///
/// # Invariants
///
/// `dentry` is a directory created by `debugfs_create_dir()` and not removed yet; `_parent`
/// is the directory it is in, which stays until this one is removed.
pub(crate) struct Dir {
    dentry: *mut bindings::dentry,
    _parent: Option<Arc<Dir>>,
}

// SAFETY: a dentry pointer may be used and removed from any thread.
unsafe impl Send for Dir {}
// SAFETY: shared access only passes the pointer to debugfs, which locks what it changes.
unsafe impl Sync for Dir {}

impl Dir {
    /// Creates directory `name` in `parent` (the debugfs root when `None`); `None` without
    /// debugfs or when it fails (a name taken, out of memory).
    pub(crate) fn new(name: &CStr, parent: Option<&Arc<Dir>>) -> Option<Arc<Self>> {
        let parent_dentry = parent.map_or(core::ptr::null_mut(), |parent| parent.dentry);
        // SAFETY: `name` is NUL-terminated; the parent is a live directory or NULL.
        let dentry = unsafe { ffi::zram_rs_debugfs_create_dir(name.as_char_ptr(), parent_dentry) };
        if is_err_or_null(dentry) {
            return None;
        }
        // INVARIANT: a fresh directory in `parent`, which it keeps.
        let dir = Dir {
            dentry,
            _parent: parent.cloned(),
        };
        Arc::new(dir, GFP_KERNEL).ok()
    }
}

/// A directory holding one read-only file of records, and what its reads call. Dropping it
/// removes the directory (waiting for running reads, and ending any later ones) before the
/// reader goes.
pub(crate) struct RecordsDir {
    // Dropped first.
    _dir: Arc<Dir>,
    _reader: KBox<Reader>,
}

impl RecordsDir {
    /// Creates directory `name` in `parent` with a read-only (0400) file `file` whose reads
    /// `data` serves; `None` without debugfs or when it fails.
    ///
    /// # Safety
    ///
    /// `data` stays valid until the value returned is dropped.
    pub(super) unsafe fn new<T: Records>(
        name: &CStr,
        parent: &Arc<Dir>,
        file: &CStr,
        data: *const T,
    ) -> Option<Self> {
        let reader = KBox::new(
            Reader {
                data: data.cast(),
                read: read_erased::<T>,
            },
            GFP_KERNEL,
        )
        .ok()?;
        let dir = Dir::new(name, Some(parent))?;
        let private: *const Reader = &*reader;
        // SAFETY: the names are NUL-terminated, the directory is live, the table is static
        // and names this module as its owner (an open file keeps the module), and the reader
        // (boxed) and its data outlive the directory (the caller's promise), whose removal
        // waits for the file's running reads and ends any further ones.
        let dentry = unsafe {
            ffi::zram_rs_debugfs_create_file(
                file.as_char_ptr(),
                0o400,
                dir.dentry,
                private.cast_mut().cast(),
                &RECORDS_FOPS.0,
            )
        };
        // Like C, a directory without its file is kept: it is removed all the same.
        let _ = is_err_or_null(dentry);
        Some(Self {
            _dir: dir,
            _reader: reader,
        })
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        // SAFETY: the directory is live (type invariant) and removed once, here, with what is
        // in it; the removal waits for running file operations.
        unsafe { ffi::zram_rs_debugfs_remove(self.dentry) };
    }
}

/// NULL or an `ERR_PTR` value.
fn is_err_or_null(dentry: *mut bindings::dentry) -> bool {
    dentry.is_null() || (dentry as usize) >= (-(bindings::MAX_ERRNO as isize)) as usize
}

/// What a file's reads call: `read(data, ...)`.
struct Reader {
    data: *const c_void,
    read: unsafe fn(*const c_void, &mut i64, &mut [u8]) -> Result<usize>,
}

/// [`Records::read_records`] of the `T` at `data`.
///
/// # Safety
///
/// `data` points to a valid `T`.
unsafe fn read_erased<T: Records>(
    data: *const c_void,
    pos: &mut i64,
    out: &mut [u8],
) -> Result<usize> {
    // SAFETY: by the function's contract.
    let data = unsafe { &*data.cast::<T>() };
    data.read_records(pos, out)
}

/// The file operations of every records file: one static table, owned by this module, so that
/// an open file keeps the module loaded (debugfs calls into the table when the file is closed,
/// even after the file was removed).
struct Fops(bindings::file_operations);

// SAFETY: the table is never changed; it only holds function pointers and the module's address.
unsafe impl Sync for Fops {}

// `&raw const` of an extern static is safe from Rust 1.82 on, and needed `unsafe` before.
#[allow(unused_unsafe)]
static RECORDS_FOPS: Fops = Fops(bindings::file_operations {
    // SAFETY: only the address of the module's own `struct module` is taken.
    owner: unsafe { core::ptr::addr_of!(ffi::__this_module) }.cast_mut(),
    open: Some(bindings::simple_open),
    read: Some(read_records),
    llseek: Some(bindings::default_llseek),
    // SAFETY: all-zero is a valid `file_operations` (no other operation).
    ..unsafe { core::mem::zeroed() }
});

/// The `read` operation of a records file.
///
/// # Safety
///
/// Called by the VFS for a file created by [`RecordsDir::new`] and opened with
/// `simple_open()`: its private data is the [`Reader`] given there, whose data is still valid;
/// `buf` is a user pointer of `count` bytes and `ppos` the position to read from and advance.
unsafe extern "C" fn read_records(
    file: *mut bindings::file,
    buf: *mut c_char,
    count: usize,
    ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: by the function's contract, the private data is a valid `Reader`.
    let reader = unsafe { &*(*file).private_data.cast::<Reader>() };
    // SAFETY: `ppos` is valid for this call (function's contract).
    let mut pos = unsafe { *ppos };
    let result = read_into_user(reader, &mut pos, buf.cast(), count);
    // SAFETY: as above.
    unsafe { *ppos = pos };
    match result {
        Ok(written) => isize::try_from(written).unwrap_or(isize::MAX),
        Err(error) => error.to_errno() as isize,
    }
}

/// Reads records through `reader` from `*pos` into the user buffer `buf` of `count` bytes.
fn read_into_user(reader: &Reader, pos: &mut i64, buf: *mut c_void, count: usize) -> Result<usize> {
    let count = count.min(MAX_READ);
    let mut kbuf = KVVec::from_elem(0u8, count, GFP_KERNEL)?;
    // SAFETY: the reader's data is valid while its file can be read (`RecordsDir::new`).
    let written = unsafe { (reader.read)(reader.data, pos, &mut kbuf) }?;
    let mut writer = UserSlice::new(user_ptr(buf), written).writer();
    writer.write_slice(kbuf.get(..written).ok_or(EINVAL)?)?;
    Ok(written)
}

#[cfg(zram_rs_user_ptr_struct)]
fn user_ptr(buf: *mut c_void) -> UserPtr {
    UserPtr::from_ptr(buf)
}

#[cfg(not(zram_rs_user_ptr_struct))]
fn user_ptr(buf: *mut c_void) -> UserPtr {
    buf as UserPtr
}
