package geosim

import (
	"strings"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/geodist"
)

// A model with a truth pull answers closer to a file's true position than
// one without, and names the place nearest its answer; a model with no
// pull, or a file with no truth, answers from the hash as before.
func TestTruthPullMovesTowardsTheTruth(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	truth := center{53.54389, 9.96611} // Hamburg harbour
	s := New()
	s.SetTruth(sha, truth.Latitude, truth.Longitude)
	older, newer := Model{ID: "global_v0.2", Type: TypeGlobal}, Model{ID: "global_v0.3", Type: TypeGlobal, TruthPull: 0.95}
	if p := s.truthPull(sha, older); p != nil {
		t.Fatalf("a model without pull got %+v", p)
	}
	if p := s.truthPull(strings.Repeat("cd", 32), newer); p != nil {
		t.Fatalf("a file without truth got %+v", p)
	}
	top := func(p *pull) cluster {
		return predictionFor(TypeGlobal, sha, 1, false, p).(coordinatesResult).Clusters[0]
	}
	before, after := top(s.truthPull(sha, older)), top(s.truthPull(sha, newer))
	errBefore := geodist.Km(before.Center.Latitude, before.Center.Longitude, truth.Latitude, truth.Longitude)
	errAfter := geodist.Km(after.Center.Latitude, after.Center.Longitude, truth.Latitude, truth.Longitude)
	if !(errAfter < errBefore/5) {
		t.Errorf("error %0.f km with pull 0.95, %0.f km without: want far closer", errAfter, errBefore)
	}
	nearest := gazetteer[0]
	for _, pl := range gazetteer {
		if geodist.Km(after.Center.Latitude, after.Center.Longitude, pl.Lat, pl.Lon) < geodist.Km(after.Center.Latitude, after.Center.Longitude, nearest.Lat, nearest.Lon) {
			nearest = pl
		}
	}
	if after.Location.Name != nearest.Name {
		t.Errorf("the pulled answer is named %q, want the place nearest it, %q", after.Location.Name, nearest.Name)
	}
}
