package geosim

import "github.com/geolocate-aws/geolocate/pkg/geodist"

// Truth lets a local scenario judge models: the simulator is told where
// some files were really taken (SetTruth, by the SHA-256 of the bytes it
// receives: with uploadMetadata=strip the photo's EXIF position never
// reaches it), and each model's TruthPull says how close its top answer
// comes. A model with pull 0 (every model unless told) answers from the
// file's hash alone, as before; a newer model with a larger pull is more
// accurate on the same photos, which a reprocess run's comparison shows.

// SetTruth records where the file whose received bytes have sha256 was
// taken.
func (s *Server) SetTruth(sha256 string, lat, lon float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.truth == nil {
		s.truth = map[string]center{}
	}
	s.truth[sha256] = center{lat, lon}
}

// truthPull is the true position of a file and the pull of the model
// answering it; nil when either is unknown or zero.
func (s *Server) truthPull(sha256 string, m Model) *pull {
	if m.TruthPull <= 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.truth[sha256]
	if !ok {
		return nil
	}
	return &pull{to: c, by: min(m.TruthPull, 1)}
}

// pull moves a guess the share by of the way to a true position.
type pull struct {
	to center
	by float64
}

// apply moves g towards the truth and names it after the nearest place.
func (p *pull) apply(g *guess) {
	if p == nil {
		return
	}
	g.lat = round(g.lat+p.by*(p.to.Latitude-g.lat), 6)
	g.lon = round(g.lon+p.by*(p.to.Longitude-g.lon), 6)
	best := gazetteer[0]
	for _, pl := range gazetteer[1:] {
		if geodist.Km(g.lat, g.lon, pl.Lat, pl.Lon) < geodist.Km(g.lat, g.lon, best.Lat, best.Lon) {
			best = pl
		}
	}
	g.place = best
}
