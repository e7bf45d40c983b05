//! Waiting for a future in a blocking call. Natively it blocks for as long as the future takes
//! (pollster). On the web the page's thread must never block (the browser answers the GPU's
//! callbacks on that very thread, between tasks): a future that is ready at once (the CPU
//! backend's work, or anything that does not wait for the GPU) still completes, any other is
//! [`Error::WouldBlock`](crate::Error::WouldBlock), naming the call, instead of a panic deep in the standard library.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use crate::error::Result;

/// The output of `f`, waited for (see the module's documentation): `call` names the blocking
/// call for the error on the web.
pub(crate) fn block_on<T>(call: &'static str, f: impl Future<Output = T>) -> Result<T> {
    let mut f = std::pin::pin!(f);
    if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        return Ok(v);
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = call;
        Ok(pollster::block_on(f))
    }
    #[cfg(target_arch = "wasm32")]
    Err(crate::error::Error::WouldBlock { call })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_and_pending_futures_complete_natively() {
        assert_eq!(block_on("ready", async { 3 }).unwrap(), 3);
        let mut first = true;
        let pending_once = std::future::poll_fn(|cx| {
            if std::mem::take(&mut first) {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(4)
            }
        });
        assert_eq!(block_on("pending once", pending_once).unwrap(), 4);
    }
}
