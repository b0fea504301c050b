package geodist

// Threshold is a named accuracy level: a prediction within Km of the truth
// counts as correct at that level.
type Threshold struct {
	Name string
	Km   float64
}

// Thresholds are the levels the image geolocation literature reports
// accuracy at (Im2GPS, Hays and Efros 2008, and the work that followed):
// street 1 km, city 25 km, region 200 km, country 750 km, continent
// 2,500 km. They are data, smallest first, so that metrics and reports
// iterate over the same list.
var Thresholds = []Threshold{
	{Name: "street", Km: 1},
	{Name: "city", Km: 25},
	{Name: "region", Km: 200},
	{Name: "country", Km: 750},
	{Name: "continent", Km: 2500},
}

// Within returns the thresholds a distance falls within (distance <= Km),
// smallest first; none for a distance over 2,500 km, or a negative or NaN
// one, which can only come from a bug upstream.
func Within(km float64) []Threshold {
	var out []Threshold
	if !(km >= 0) {
		return nil
	}
	for _, t := range Thresholds {
		if km <= t.Km {
			out = append(out, t)
		}
	}
	return out
}
