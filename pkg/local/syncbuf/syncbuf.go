// Package syncbuf is a bytes.Buffer safe for concurrent writers: tests
// capture the logs of handlers that run in parallel goroutines.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects writes from many goroutines.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
