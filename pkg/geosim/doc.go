// Package geosim is an in-process simulator of the image geolocation service
// described in shared/spec/geolocation-service.md. It implements every rule of
// the contract (keys, credits, models, prediction, limits) so the client, the
// Lambda functions and the local pipeline can be tested without spending real
// credits, and it can inject faults (latency, 5xx, dropped connections,
// malformed bodies, rate-limit storms) from a seeded random source so runs
// are reproducible.
//
// A *Server is an http.Handler:
//
//	sim := geosim.New()
//	ts := httptest.NewServer(sim)
//	defer ts.Close()
//	key := sim.DemoKey()
//
// Where the contract is silent the simulator makes an assumption, stated next
// to the code that makes it. The main ones:
//
//   - Charging happens only when a success response is about to be delivered:
//     right before charging, the request context is checked, so a client that
//     timed out or disconnected while the prediction ran is not charged. (A
//     connection lost after that point is charged, as with any real service;
//     the DropAfterChargeRate fault reproduces exactly that case.)
//   - A model whose status is "down" answers 503 on predict.
//   - Unsupported image formats answer 415.
//   - A whitelist model not granted to the caller's organisation answers 422,
//     because the contract says an id absent from the caller's model list is
//     rejected with 422.
//   - A malformed 200 body (fault) is charged by default: a real service that
//     answered 200 did the work.
package geosim
