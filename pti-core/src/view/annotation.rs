//! The records of annotations (`PTI_VIEW_EXT_ANNOTATION`, a libpti extension) and of the
//! communication they describe (`PTI_VIEW_COMMUNICATION`), written by `crate::annotation` when a
//! range ends, into the buffer of the thread that ended it.

use core::ffi::CStr;

use super::abi::*;
use super::buffer::append;
use super::is_configured;
use crate::thread::{self, ThreadState};

/// A range or instant the program annotated, ended.
pub(crate) struct Annotation {
    pub(crate) kind: pti_view_annotation_type,
    pub(crate) domain: &'static CStr,
    pub(crate) name: &'static CStr,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) id: u64,
    pub(crate) parent: u64,
    pub(crate) depth: u32,
}

/// A collective or point-to-point operation, from an annotation of oneCCL's.
pub(crate) struct Communication {
    pub(crate) name: &'static CStr,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) send: u64,
    pub(crate) recv: u64,
    pub(crate) communicator: u64,
}

/// Writes an annotation record, if the tool enabled that view (the range began while collection
/// ran: `crate::annotation` checked).
pub(crate) fn annotation(state: &ThreadState, a: &Annotation) {
    let kind = pti_view_kind::PTI_VIEW_EXT_ANNOTATION;
    if !is_configured(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_annotation {
            _view_kind: pti_view_record_base::of(kind),
            _annotation_type: a.kind,
            _start_timestamp: a.start,
            _end_timestamp: a.end.max(a.start),
            _domain: a.domain.as_ptr(),
            _name: a.name.as_ptr(),
            _id: a.id,
            _parent_id: a.parent,
            _process_id: thread::process_id(),
            _thread_id: state.thread_id(),
            _depth: a.depth,
            _reserved: 0,
        },
    );
}

/// Writes a communication record, if the tool enabled that view.
pub(crate) fn communication(state: &ThreadState, c: &Communication) {
    let kind = pti_view_kind::PTI_VIEW_COMMUNICATION;
    if !is_configured(kind) {
        return;
    }
    append(
        state,
        kind,
        pti_view_record_comms {
            _view_kind: pti_view_record_base::of(kind),
            _start_timestamp: c.start,
            _end_timestamp: c.end.max(c.start),
            _process_id: thread::process_id(),
            _thread_id: state.thread_id(),
            _send_size: c.send,
            _recv_size: c.recv,
            _communicator_id: c.communicator,
            _name: c.name.as_ptr(),
        },
    );
}
