package geosim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Start serves the simulator on addr, which must be a loopback address
// ("127.0.0.1:0" picks a free port; an empty host means 127.0.0.1). It
// returns the base URL and a stop function that shuts the server down.
func (s *Server) Start(addr string) (baseURL string, stop func(), err error) {
	ln, err := listenLoopback(addr)
	if err != nil {
		return "", nil, err
	}
	srv := s.httpServer()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Shutdown
	}()
	stop = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
		<-done
	}
	return "http://" + ln.Addr().String(), stop, nil
}

// ListenAndServe serves on addr (loopback only) until ctx is done, then
// shuts down gracefully. ready, if not nil, receives the base URL once the
// listener is bound.
func (s *Server) ListenAndServe(ctx context.Context, addr string, ready func(baseURL string)) error {
	ln, err := listenLoopback(addr)
	if err != nil {
		return err
	}
	srv := s.httpServer()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready("http://" + ln.Addr().String())
	}
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		_ = srv.Close()
		return fmt.Errorf("shut down %s: %w", ln.Addr(), err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}

func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
	}
}

// listenLoopback binds addr, refusing anything but a loopback address: the
// simulator is a test tool and must never be reachable from the network.
func listenLoopback(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("listen %q: the simulator binds loopback addresses only", addr)
		}
	} else {
		host = "127.0.0.1"
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return ln, nil
}
