// Package soak holds the pipeline's proof of reliability: tests that run the
// real predictor handler against the service simulator, in-memory S3
// (gofakes3) and DynamoDB Local, and account for every upload and every
// credit afterwards.
//
//   - TestSoak runs thousands of uploads through the local queue with several
//     concurrent handler "instances" while injecting the faults AWS and the
//     service produce (5xx, 429 storms, slow responses, dropped connections,
//     malformed bodies, duplicate and out-of-order deliveries, a regenerated
//     key, credits running out, Lambda crashes between the call and the
//     write), then checks that nothing was lost or charged twice. The size
//     comes from SOAK_UPLOADS (default 2000; `make soak N=20000`).
//   - TestBadInputs is a table of hostile or odd inputs, each with the record
//     it must leave and the number of paid calls it may cost.
//   - TestSecurity checks that the API key never reaches a log line or a
//     record.
//
// The package has no API: everything lives in its tests.
package soak
