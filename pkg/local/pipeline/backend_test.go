package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
	"github.com/geolocate-aws/geolocate/pkg/local/geosim"
	"github.com/geolocate-aws/geolocate/pkg/monitor"
)

// TestRunAgainstTheBackendProfile runs the pipeline against the simulator
// as the service's public backend behaves (keys refused off predict, its
// own key header, 30 predictions a minute, its answers): every photo is
// geolocated and paid once, and the monitor reports healthy with the credit
// state explained.
func TestRunAgainstTheBackendProfile(t *testing.T) {
	db := awspartstest.SharedDynamoDB(t)
	// Few photos: at the backend's 30 a minute each costs 2 s.
	dir, want := t.TempDir(), map[string]wantOutcome{}
	for _, name := range []string{"checker-32x32.png", "harbour at dusk.jpg", "not-an-image.jpg"} {
		b, err := os.ReadFile(filepath.Join(sampleImagesDir, name))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, b)
		w := outcomeOf(b)
		w.heldSlot = true // 30 a minute: slots 2 s apart, beyond MaxSlotWait
		want[name] = w
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sum, err := Run(ctx, Options{
		ImagesDir: dir,
		Getenv:    noServiceEnv,
		DynamoDB:  db,
		Table:     "backend-" + fmt.Sprint(time.Now().UnixNano()),
		Profile:   geosim.ProfileBackend,
		Progress:  testLog{t},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResults(t, sum, want)
	if n := succeeded(want); sum.PredictCalls != n || sum.CreditsCharged != n || sum.CreditsRecorded() != n {
		t.Errorf("%d calls, %d charged, %d recorded; want %d each", sum.PredictCalls, sum.CreditsCharged, sum.CreditsRecorded(), n)
	}
	rep := sum.Monitor
	if rep == nil || !rep.Healthy {
		t.Fatalf("monitor %+v (%s)", rep, sum.MonitorError)
	}
	if rep.Credits == nil || rep.Credits.Source != monitor.SourceEstimate || rep.Credits.Remaining != float64(geosim.DefaultAllowance-succeeded(want)) {
		t.Errorf("credits %+v: want the estimate from the declared balance minus what was charged", rep.Credits)
	}
	if !strings.Contains(rep.CreditNote, "does not let API keys read the credit summary") || rep.Models == nil || !rep.Models.PublicOnly {
		t.Errorf("note %q, models %+v", rep.CreditNote, rep.Models)
	}
}
