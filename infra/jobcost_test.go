package main

import (
	"context"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts"
	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/jobcost"
)

// TestJobEngineUsagePerObject measures what docs/jobs.md's "## Cost"
// prices for a 1,000,000-object job (pkg/local/jobcost: a backfill at the
// stack's default rate, 30 a minute, run to done by the real feeder on
// DynamoDB Local) and holds the figures it states: per object at most jobCostWrites write
// units and jobCostReads read units of the feeder, jobCostEndWrites of the
// predictor's counter update, SendMessageBatch requests of 10 messages
// (less a partial batch a run) and a listing request per 1,000 objects.
func TestJobEngineUsagePerObject(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a job on DynamoDB Local for simulated hours")
	}
	ddb, table := awspartstest.DynamoDB(t, awsparts.WithoutStream)
	u, err := jobcost.Measure(context.Background(), ddb, table, jobcost.Config{})
	if err != nil {
		t.Fatal(err)
	}
	n := float64(u.Objects)
	feederWrites := (u.Feeder.WriteUnits + float64(u.Feeder.FailedWrites)) / n
	endWrites := (u.Ends.WriteUnits + float64(u.Ends.FailedWrites)) / n
	t.Logf("%d objects, %d feeder runs: per object %.4f feeder write units, %.4f feeder read units, %.4f end write units; "+
		"%.5f ListObjectVersions, %.4f SendMessageBatch requests; feeder requests %v, end requests %v",
		u.Objects, u.FeederRuns, feederWrites, u.Feeder.ReadUnits/n, endWrites, float64(u.ListRequests)/n, float64(u.SendRequests)/n, u.Feeder.Requests, u.Ends.Requests)
	for fam, iu := range u.Feeder.Items {
		t.Logf("feeder item family %q: %d writes, %.1f table units, %.1f index units, %d reads", fam, iu.Writes, iu.TableUnits, iu.IndexUnits, iu.Reads)
	}
	if feederWrites > jobCostWrites {
		t.Errorf("the feeder writes %.4f units per object, docs/jobs.md says at most %.2f", feederWrites, jobCostWrites)
	}
	if reads := u.Feeder.ReadUnits / n; reads > jobCostReads {
		t.Errorf("the feeder reads %.4f units per object, docs/jobs.md says at most %.2f", reads, jobCostReads)
	}
	if endWrites > jobCostEndWrites {
		t.Errorf("the predictor's counter update writes %.4f units per object, docs/jobs.md says at most %.2f", endWrites, jobCostEndWrites)
	}
	// Ten messages a request, less a partial batch per run.
	if per := float64(u.SendRequests) / n; per > 0.1+float64(u.FeederRuns)/n {
		t.Errorf("%.4f SendMessageBatch requests per object: batches are not filled", per)
	}
	if pages := (u.Objects + 999) / 1000; u.ListRequests > pages {
		t.Errorf("%d ListObjectVersions requests for %d objects, want one per 1,000 (%d)", u.ListRequests, u.Objects, pages)
	}
}

// The per-object figures docs/jobs.md states (upper bounds the test holds).
const (
	jobCostWrites    = 0.5
	jobCostReads     = 2.5
	jobCostEndWrites = 1.0
)
