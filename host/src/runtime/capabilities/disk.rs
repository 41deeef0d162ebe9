//! The disk limit for guests. What a tool or skill call puts on disk through WASI is counted
//! against the plugin's `disk_mib`; the operation that would pass it traps, and the call fails
//! naming the limit. Counted: bytes written to files (the streams `write-via-stream` and
//! `append-via-stream` open, splices into them at their requested length, every positioned
//! write), the growth a write past the end, a stream opened past it or `set-size` gives a file
//! (a sparse file is counted at its size), and each file, directory or hard link made, at
//! [`ENTRY_BYTES`] (an inode and a directory entry: a call cannot fill the file system's inodes
//! with empty files). Stdout, sockets and HTTP bodies are not disk. Guests cannot create
//! symlinks at all (`symlink-at` answers `not-permitted`): a link pointing out of a mount is
//! harmless to the guest, which cannot follow it, but not to native programs or the operator's
//! own tools.
//!
//! These wrap wasmtime-wasi's own functions (the linker's shadowing), so they exist only for
//! calls under hard deadlines ([`crate::runtime::Deadlines::Hard`], what the CLI and daemon
//! run): the epoch path, kept to measure against, has no disk limit.

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    Descriptor, DescriptorFlags, ErrorCode, Filesize, Host as FsHost, HostDescriptor, OpenFlags,
    PathFlags,
};
use wasmtime_wasi::p2::bindings::io::streams::{
    Host as StreamsHost, HostOutputStream, StreamError as WitStreamError,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsResult, StreamResult};

use crate::runtime::state::ToolData;

/// The WASI 0.2 release wasmtime-wasi 48 links; guests built against any 0.2.x reach it.
const STREAMS: &str = "wasi:io/streams@0.2.12";
const FILESYSTEM: &str = "wasi:filesystem/types@0.2.12";

/// What making one file, directory or hard link costs against the limit: a block, about what
/// an inode and its directory entry take on common file systems. 2,048 per 8 MiB.
pub const ENTRY_BYTES: u64 = 4096;

/// What one call wrote, against its limit.
#[derive(Debug, Default)]
pub struct DiskMeter {
    /// The limit, in bytes.
    pub cap: u64,
    /// Bytes written so far.
    pub used: u64,
    /// Whether a write was refused for the limit.
    pub hit: bool,
    /// The output streams that write to files (their resource handles).
    files: std::collections::HashSet<u32>,
}

impl DiskMeter {
    /// A meter for a call limited to `cap` bytes.
    pub fn new(cap: u64) -> DiskMeter {
        DiskMeter {
            cap,
            ..DiskMeter::default()
        }
    }

    /// Count `bytes` about to be written to `stream`, if it writes to a file.
    fn charge_stream(&mut self, stream: u32, bytes: u64) -> wasmtime::Result<()> {
        if self.files.contains(&stream) {
            self.charge(bytes)
        } else {
            Ok(())
        }
    }

    /// Give back `bytes` counted for an operation that failed.
    fn refund(&mut self, bytes: u64) {
        self.used = self.used.saturating_sub(bytes);
    }

    /// Count `bytes` about to be written; past the limit, the trap that ends the call.
    fn charge(&mut self, bytes: u64) -> wasmtime::Result<()> {
        let after = self.used.saturating_add(bytes);
        if after > self.cap {
            self.hit = true;
            return Err(wasmtime::format_err!(
                "wrote past its disk limit of {} MiB",
                self.cap >> 20
            ));
        }
        self.used = after;
        Ok(())
    }
}

/// The size of the file `fd` (a borrow of it) is now; 0 when it cannot be read.
async fn size_now(data: &mut ToolData, fd: u32) -> u64 {
    let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
    HostDescriptor::stat(&mut view, Resource::new_borrow(fd))
        .await
        .map_or(0, |s| s.size)
}

/// Answer `r` as wasmtime-wasi would, giving back `charged` when it failed.
fn fs_result_refunded<T>(
    data: &mut ToolData,
    r: FsResult<T>,
    charged: u64,
) -> wasmtime::Result<(Result<T, ErrorCode>,)> {
    if r.is_err() {
        data.common.disk.refund(charged);
    }
    fs_result(data, r)
}

fn stream_result<T>(
    data: &mut ToolData,
    r: StreamResult<T>,
) -> wasmtime::Result<(Result<T, WitStreamError>,)> {
    Ok((match r {
        Ok(v) => Ok(v),
        Err(e) => Err(StreamsHost::convert_stream_error(&mut data.table, e)?),
    },))
}

fn fs_result<T>(data: &mut ToolData, r: FsResult<T>) -> wasmtime::Result<(Result<T, ErrorCode>,)> {
    Ok((match r {
        Ok(v) => Ok(v),
        Err(e) => Err(FsHost::convert_error_code(
            &mut wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data),
            e,
        )?),
    },))
}

/// Remember a file stream just opened, and answer as wasmtime-wasi would.
fn file_stream(
    data: &mut ToolData,
    r: FsResult<Resource<DynOutputStream>>,
) -> wasmtime::Result<(Result<Resource<DynOutputStream>, ErrorCode>,)> {
    if let Ok(stream) = &r {
        data.common.disk.files.insert(stream.rep());
    }
    fs_result(data, r)
}

/// Put the metered writes and the refused `symlink-at` over wasmtime-wasi's in `linker`
/// (which already has WASI, async).
///
/// # Errors
/// The linker refuses a definition (a wasmtime-wasi that links another WASI release).
pub fn shadow(linker: &mut Linker<ToolData>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let mut streams = linker.instance(STREAMS)?;
    streams.func_wrap(
        "[method]output-stream.write",
        |mut store: StoreContextMut<'_, ToolData>,
         (s, bytes): (Resource<DynOutputStream>, Vec<u8>)| {
            let data = store.data_mut();
            data.common
                .disk
                .charge_stream(s.rep(), bytes.len() as u64)?;
            let r = HostOutputStream::write(&mut data.table, s, bytes);
            stream_result(data, r)
        },
    )?;
    streams.func_wrap(
        "[method]output-stream.write-zeroes",
        |mut store: StoreContextMut<'_, ToolData>, (s, len): (Resource<DynOutputStream>, u64)| {
            let data = store.data_mut();
            data.common.disk.charge_stream(s.rep(), len)?;
            let r = HostOutputStream::write_zeroes(&mut data.table, s, len);
            stream_result(data, r)
        },
    )?;
    streams.func_wrap_async(
        "[method]output-stream.blocking-write-and-flush",
        |mut store: StoreContextMut<'_, ToolData>,
         (s, bytes): (Resource<DynOutputStream>, Vec<u8>)| {
            Box::new(async move {
                let data = store.data_mut();
                data.common
                    .disk
                    .charge_stream(s.rep(), bytes.len() as u64)?;
                let r = HostOutputStream::blocking_write_and_flush(&mut data.table, s, bytes).await;
                stream_result(data, r)
            })
        },
    )?;
    streams.func_wrap_async(
        "[method]output-stream.blocking-write-zeroes-and-flush",
        |mut store: StoreContextMut<'_, ToolData>, (s, len): (Resource<DynOutputStream>, u64)| {
            Box::new(async move {
                let data = store.data_mut();
                data.common.disk.charge_stream(s.rep(), len)?;
                let r = HostOutputStream::blocking_write_zeroes_and_flush(&mut data.table, s, len)
                    .await;
                stream_result(data, r)
            })
        },
    )?;
    // A splice copies up to `len` bytes: counted as if all of them were written.
    streams.func_wrap(
        "[method]output-stream.splice",
        |mut store: StoreContextMut<'_, ToolData>,
         (d, s, len): (Resource<DynOutputStream>, Resource<DynInputStream>, u64)| {
            let data = store.data_mut();
            data.common.disk.charge_stream(d.rep(), len)?;
            let r = HostOutputStream::splice(&mut data.table, d, s, len);
            stream_result(data, r)
        },
    )?;
    streams.func_wrap_async(
        "[method]output-stream.blocking-splice",
        |mut store: StoreContextMut<'_, ToolData>,
         (d, s, len): (Resource<DynOutputStream>, Resource<DynInputStream>, u64)| {
            Box::new(async move {
                let data = store.data_mut();
                data.common.disk.charge_stream(d.rep(), len)?;
                let r = HostOutputStream::blocking_splice(&mut data.table, d, s, len).await;
                stream_result(data, r)
            })
        },
    )?;
    let mut fs = linker.instance(FILESYSTEM)?;
    fs.func_wrap_async(
        "[method]descriptor.write",
        |mut store: StoreContextMut<'_, ToolData>,
         (fd, buf, offset): (Resource<Descriptor>, Vec<u8>, u64)| {
            Box::new(async move {
                let data = store.data_mut();
                // A write past the end also makes the gap before it (a sparse file counts at
                // its size). At offset 0 there is no gap: the write's length is the most it
                // adds, and the file is not looked at.
                let len = buf.len() as u64;
                let grows = if offset == 0 {
                    len
                } else {
                    let size = size_now(data, fd.rep()).await;
                    offset.saturating_add(len).saturating_sub(size)
                };
                data.common.disk.charge(len.max(grows))?;
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let r = HostDescriptor::write(&mut view, fd, buf, offset).await;
                fs_result(data, r)
            })
        },
    )?;
    // A size is counted as written, at what it adds: a sparse file is counted at its size.
    fs.func_wrap_async(
        "[method]descriptor.set-size",
        |mut store: StoreContextMut<'_, ToolData>, (fd, size): (Resource<Descriptor>, Filesize)| {
            Box::new(async move {
                let data = store.data_mut();
                let grows = size.saturating_sub(size_now(data, fd.rep()).await);
                data.common.disk.charge(grows)?;
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let r = HostDescriptor::set_size(&mut view, fd, size).await;
                fs_result_refunded(data, r, grows)
            })
        },
    )?;
    // Entries made: a file `open-at` creates (opening one that exists costs nothing), a
    // directory, a hard link.
    fs.func_wrap_async(
        "[method]descriptor.open-at",
        |mut store: StoreContextMut<'_, ToolData>,
         (fd, path_flags, path, oflags, flags): (
            Resource<Descriptor>,
            PathFlags,
            String,
            OpenFlags,
            DescriptorFlags,
        )| {
            Box::new(async move {
                let data = store.data_mut();
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let makes = oflags.contains(OpenFlags::CREATE)
                    && HostDescriptor::stat_at(
                        &mut view,
                        Resource::new_borrow(fd.rep()),
                        path_flags,
                        path.clone(),
                    )
                    .await
                    .is_err();
                let charged = if makes { ENTRY_BYTES } else { 0 };
                data.common.disk.charge(charged)?;
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let r =
                    HostDescriptor::open_at(&mut view, fd, path_flags, path, oflags, flags).await;
                fs_result_refunded(data, r, charged)
            })
        },
    )?;
    fs.func_wrap_async(
        "[method]descriptor.create-directory-at",
        |mut store: StoreContextMut<'_, ToolData>, (fd, path): (Resource<Descriptor>, String)| {
            Box::new(async move {
                let data = store.data_mut();
                data.common.disk.charge(ENTRY_BYTES)?;
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let r = HostDescriptor::create_directory_at(&mut view, fd, path).await;
                fs_result_refunded(data, r, ENTRY_BYTES)
            })
        },
    )?;
    fs.func_wrap_async(
        "[method]descriptor.link-at",
        |mut store: StoreContextMut<'_, ToolData>,
         (fd, old_flags, old_path, new_fd, new_path): (
            Resource<Descriptor>,
            PathFlags,
            String,
            Resource<Descriptor>,
            String,
        )| {
            Box::new(async move {
                let data = store.data_mut();
                data.common.disk.charge(ENTRY_BYTES)?;
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let r =
                    HostDescriptor::link_at(&mut view, fd, old_flags, old_path, new_fd, new_path)
                        .await;
                fs_result_refunded(data, r, ENTRY_BYTES)
            })
        },
    )?;
    // The streams that write to files: remembered, so that their writes are counted.
    // A stream that starts past the end makes the gap before it.
    fs.func_wrap_async(
        "[method]descriptor.write-via-stream",
        |mut store: StoreContextMut<'_, ToolData>, (fd, offset): (Resource<Descriptor>, u64)| {
            Box::new(async move {
                let data = store.data_mut();
                let gap = offset.saturating_sub(size_now(data, fd.rep()).await);
                data.common.disk.charge(gap)?;
                let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
                let r = HostDescriptor::write_via_stream(&mut view, fd, offset);
                if r.is_err() {
                    data.common.disk.refund(gap);
                }
                file_stream(data, r)
            })
        },
    )?;
    fs.func_wrap(
        "[method]descriptor.append-via-stream",
        |mut store: StoreContextMut<'_, ToolData>, (fd,): (Resource<Descriptor>,)| {
            let data = store.data_mut();
            let mut view = wasmtime_wasi::filesystem::WasiFilesystemView::filesystem(data);
            let r = HostDescriptor::append_via_stream(&mut view, fd);
            file_stream(data, r)
        },
    )?;
    fs.func_wrap(
        "[method]descriptor.symlink-at",
        |store: StoreContextMut<'_, ToolData>,
         (_fd, target, _path): (Resource<Descriptor>, String, String)| {
            tracing::info!(
                plugin = %store.data().common.plugin,
                "refused a symlink to {target:?}: guests cannot create symlinks"
            );
            Ok((Err::<(), _>(ErrorCode::NotPermitted),))
        },
    )?;
    linker.allow_shadowing(false);
    Ok(())
}
