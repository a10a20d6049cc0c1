//! The socket under hyper: which protocol a cleartext client speaks (the HTTP/2 preface
//! or not), the bytes read to tell put back, and the send deadline on every write.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};

use super::HEADER_READ_TIMEOUT;

/// What every HTTP/2 connection starts with (RFC 9113 §3.4).
const HTTP2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// A socket whose writes fail with `TimedOut` once one has made no progress for the send
/// timeout: a client that stops reading is dropped, not kept open by a write that never
/// ends. Under TLS it wraps the TCP stream, so it sees the bytes actually leaving.
pub(super) struct SendDeadline<T> {
    inner: T,
    timeout: Duration,
    /// Armed by the first write that cannot proceed; disarmed by any write that does.
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> SendDeadline<T> {
    pub(super) fn new(inner: T, timeout: Duration) -> SendDeadline<T> {
        SendDeadline {
            inner,
            timeout,
            stalled: None,
        }
    }

    fn check<R>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<R>>,
    ) -> Poll<std::io::Result<R>> {
        match polled {
            Poll::Pending => {
                let timeout = self.timeout;
                let stalled = self
                    .stalled
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match stalled.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing for the send timeout",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
            ready => {
                self.stalled = None;
                ready
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for SendDeadline<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for SendDeadline<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.check(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.check(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_flush(cx);
        this.check(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_shutdown(cx);
        this.check(cx, polled)
    }
}

/// Tells the kernel to give up on a connection whose sent data has gone unacknowledged
/// for `timeout` (`TCP_USER_TIMEOUT`), so a peer that vanished, or shrank its receive
/// window to nothing, is dropped by the kernel too.
pub(super) fn set_user_timeout(stream: &std::net::TcpStream, timeout: Duration) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let millis = libc::c_uint::try_from(timeout.as_millis()).unwrap_or(libc::c_uint::MAX);
        // SAFETY: setsockopt reads `size_of::<c_uint>()` bytes from the pointer, which
        // points at `millis`, alive for the call; the descriptor is the stream's own.
        let set = unsafe {
            libc::setsockopt(
                stream.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_USER_TIMEOUT,
                (&millis as *const libc::c_uint).cast(),
                std::mem::size_of::<libc::c_uint>() as libc::socklen_t,
            )
        };
        if set != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "TCP_USER_TIMEOUT not set");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (stream, timeout);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    Http1,
    Http2,
}

/// Which protocol a cleartext client speaks: HTTP/2 if it starts with the preface ("h2c"
/// by prior knowledge), else HTTP/1. The bytes read to tell are put back in front of the
/// stream for hyper. Gives up (`None`) when the client closes first or does not finish
/// telling within [`HEADER_READ_TIMEOUT`], like a request head that never arrives.
///
/// It reads rather than peeks: a peek sees the same bytes again and again, so waiting for
/// more of a partial preface would be a polling loop (and a client that closed after part
/// of it would never look closed).
pub(super) async fn sniff<S: AsyncRead + Unpin>(mut stream: S) -> Option<(Protocol, Rewind<S>)> {
    let deadline = tokio::time::Instant::now() + HEADER_READ_TIMEOUT;
    let mut start = [0u8; HTTP2_PREFACE.len()];
    let mut seen = 0;
    loop {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut start[seen..]))
            .await
            .ok()?
            .ok()?;
        if read == 0 {
            return None;
        }
        seen += read;
        let protocol = if !HTTP2_PREFACE.starts_with(&start[..seen]) {
            Protocol::Http1
        } else if seen == HTTP2_PREFACE.len() {
            Protocol::Http2
        } else {
            continue;
        };
        let stream = Rewind {
            start,
            next: 0,
            end: seen,
            inner: stream,
        };
        return Some((protocol, stream));
    }
}

/// A stream with the first bytes already read from it put back in front (see [`sniff`]).
pub(super) struct Rewind<T> {
    start: [u8; HTTP2_PREFACE.len()],
    /// `start[next..end]` is still to be read.
    next: usize,
    end: usize,
    inner: T,
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.next < this.end {
            let count = (this.end - this.next).min(buf.remaining());
            buf.put_slice(&this.start[this.next..this.next + count]);
            this.next += count;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}
