//! `fork()` while another thread flushes: a flush asks the dynamic linker which objects are
//! mapped (for the OpenCL loader without layer support and the SYCL runtime that did not call
//! libpti), and glibc's `dl_iterate_phdr` takes a lock that a child forked in the middle of it
//! inherits held. libpti asks the linker only under a lock of its own that the fork handlers hold
//! across `fork()` (`pti_core::linker`), so the child's own flush (which walks the linker again)
//! must finish. In a process of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pti_core::session;
use pti_core::view::abi::pti_view_kind;
use pti_core::view::{Buffer, BufferCallbacks, FilledBuffer};

struct Tool;

impl BufferCallbacks for Tool {
    fn request(&self) -> Option<Buffer> {
        Some(Buffer::from_boxed(vec![0u8; 4096].into_boxed_slice()))
    }

    fn complete(&self, filled: FilledBuffer) {
        // SAFETY: every buffer this tool lends comes from Buffer::from_boxed.
        drop(unsafe { filled.into_buffer().into_boxed() });
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

#[test]
fn a_child_forked_while_a_flush_walks_the_linker_can_flush() {
    session::set_buffer_callbacks(Arc::new(Tool));
    // With the runtime API view on, every flush asks whether the SYCL runtime is mapped (it is
    // not here, so it asks again each time); the OpenCL layer asks at every flush too.
    session::enable_view(pti_view_kind::PTI_VIEW_RUNTIME_API).unwrap();
    let flusher = std::thread::spawn(|| {
        let mut flushes = 0u64;
        while !STOP.load(Ordering::Relaxed) {
            session::flush().unwrap();
            flushes += 1;
        }
        flushes
    });
    std::thread::sleep(Duration::from_millis(20));
    for round in 0..300 {
        // SAFETY: the child only flushes (libpti, made fork-safe by the handlers under test, and
        // malloc, which glibc makes fork-safe) and then `_exit`s.
        match unsafe { libc::fork() } {
            -1 => panic!("fork failed"),
            0 => {
                // SAFETY: alarm and _exit are async-signal-safe; SIGALRM kills a hung child.
                unsafe {
                    libc::alarm(10);
                    let code = if session::flush().is_ok() { 0 } else { 2 };
                    libc::_exit(code);
                }
            }
            pid => {
                let mut status = 0;
                // SAFETY: waiting for our own child with a valid out-pointer.
                assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
                assert!(
                    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                    "round {round}: the child failed (raw wait status {status:#x}; a signal 14 \
                     means it hung in its flush)"
                );
            }
        }
    }
    STOP.store(true, Ordering::Relaxed);
    let flushes = flusher.join().unwrap();
    assert!(flushes > 300, "the flusher ran {flushes} flushes only");
    session::disable_view(pti_view_kind::PTI_VIEW_RUNTIME_API).unwrap();
}
