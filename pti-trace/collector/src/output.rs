//! Where the collector's records go: every batch libpti hands over, in the collector's one
//! record model (`collect`: [`ApiCall`], [`DeviceOp`], [`Memory`], [`Annotation`],
//! [`Communication`]), is given to each output in turn through [`Output`]: the summary's tallies
//! (`summary::Tally`), the streamed Perfetto timeline (`perfetto::Stream`); the JSON timeline
//! keeps the batch's records until exit (`collect::deliver`), and the CSV summary is written
//! from the tallies at exit. A new output implements [`Output`] and is called in
//! `collect::deliver`.
//!
//! May touch: nothing; it only names the shape outputs share.

use crate::collect::{Annotation, ApiCall, Communication, DeviceOp, Memory};
use crate::names::Names;

/// The records of one batch, in the order libpti delivered them within each kind.
pub(crate) struct Batch<'a> {
    pub(crate) apis: &'a [ApiCall],
    pub(crate) device: &'a [DeviceOp],
    pub(crate) memory: &'a [Memory],
    pub(crate) annotations: &'a [Annotation],
    pub(crate) communication: &'a [Communication],
}

impl Batch<'_> {
    /// Whether the batch holds no record.
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records of every kind.
    pub(crate) fn len(&self) -> usize {
        self.apis.len()
            + self.device.len()
            + self.memory.len()
            + self.annotations.len()
            + self.communication.len()
    }
}

/// An output: takes every batch as it comes (`names` has seen the batch's devices and queues).
pub(crate) trait Output {
    fn batch(&mut self, batch: &Batch<'_>, names: &Names);
}
