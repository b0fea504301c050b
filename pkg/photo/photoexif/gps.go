package photoexif

import (
	"fmt"
	"math"
)

// rat is an EXIF rational, signed or not, kept as written so that a zero
// denominator is seen rather than turned into an infinity.
type rat struct{ num, den int64 }

func (r rat) float() float64 { return float64(r.num) / float64(r.den) }

// gpsTags is the GPS IFD as written.
type gpsTags struct {
	// present and types say which of the GPS tags read (all below 0x12)
	// the IFD has, and with which TIFF type.
	present          [gpsImgDirection + 1]bool
	types            [gpsImgDirection + 1]uint16
	latRef, lonRef   string
	lat, lon         []rat
	altRef           []byte
	alt              []rat
	status           string
	dirRef           string
	dir              []rat
	latBad, lonBad   string // why a present coordinate could not be read
	latRefBad, lonRB string
}

// seen notes that tag id, one of those read, is present with type typ.
func (g *gpsTags) seen(id, typ uint16) {
	if int(id) < len(g.present) {
		g.present[id], g.types[id] = true, typ
	}
}

func (g *gpsTags) bad(id uint16, why string) {
	switch id {
	case gpsLatitude:
		g.latBad = why
	case gpsLongitude:
		g.lonBad = why
	case gpsLatitudeRef:
		g.latRefBad = why
	case gpsLongitudeRef:
		g.lonRB = why
	}
}

func (g *gpsTags) set(id uint16, v any) {
	switch id {
	case gpsLatitudeRef:
		g.latRef = ascii(v)
	case gpsLongitudeRef:
		g.lonRef = ascii(v)
	case gpsLatitude:
		g.lat = rats(v)
	case gpsLongitude:
		g.lon = rats(v)
	case gpsAltitudeRef:
		g.altRef, _ = v.([]byte)
	case gpsAltitude:
		g.alt = rats(v)
	case gpsStatus:
		g.status = ascii(v)
	case gpsImgDirectionRef:
		g.dirRef = ascii(v)
	case gpsImgDirection:
		g.dir = rats(v)
	}
}

// rats is a RATIONAL or SRATIONAL value; nil for any other type.
func rats(v any) []rat {
	r, _ := v.([]rat)
	return r
}

// gpsFrom applies the validity rules. Whatever is wrong, the answer is no
// position and a reason: an invalid position must never become ground truth
// or a reason to skip a paid prediction.
func gpsFrom(g *gpsTags) (*GPS, *Problem) {
	if g.status == "V" {
		return nil, problemf(ReasonStatusVoid, "GPSStatus is V (measurement void)")
	}
	for _, c := range []struct {
		tag      uint16
		name     string
		vals     []rat
		bad, ref string
	}{
		{gpsLatitude, "GPSLatitude", g.lat, g.latBad, g.latRefBad},
		{gpsLongitude, "GPSLongitude", g.lon, g.lonBad, g.lonRB},
	} {
		typ, present := g.types[c.tag], g.present[c.tag]
		switch {
		case c.bad != "":
			return nil, problemf(ReasonGPSMalformed, "%s %s", c.name, c.bad)
		case c.ref != "":
			return nil, problemf(ReasonGPSMalformed, "%sRef %s", c.name, c.ref)
		case present && c.vals == nil:
			return nil, problemf(ReasonGPSMalformed, "%s has TIFF type %d, not RATIONAL", c.name, typ)
		case !present:
			return nil, problemf(ReasonNoFix, "GPS block without %s (no fix)", c.name)
		}
	}
	lat, p := coordinate("GPSLatitude", g.lat, g.latRef, "N", "S")
	if p != nil {
		return nil, p
	}
	lon, p := coordinate("GPSLongitude", g.lon, g.lonRef, "E", "W")
	if p != nil {
		return nil, p
	}
	if p := CheckPosition(lat, lon); p != nil {
		return nil, p
	}
	return &GPS{Lat: lat, Lon: lon, Altitude: altitude(g), Direction: direction(g)}, nil
}

// coordinate turns degrees, minutes and seconds and a hemisphere reference
// into signed decimal degrees.
func coordinate(name string, v []rat, ref, pos, neg string) (float64, *Problem) {
	if len(v) != 3 {
		return 0, problemf(ReasonGPSMalformed, "%s has %d values, not 3", name, len(v))
	}
	for _, r := range v {
		if r.den == 0 {
			return 0, problemf(ReasonZeroDenominator, "%s has a zero denominator (%d/0)", name, r.num)
		}
	}
	d, m, s := v[0].float(), v[1].float(), v[2].float()
	if d < 0 || m < 0 || s < 0 || m >= 60 || s >= 60 {
		return 0, problemf(ReasonOutOfRange, "%s %g° %g' %g\" is not a valid angle", name, d, m, s)
	}
	deg := d + m/60 + s/3600
	switch ref {
	case pos:
	case neg:
		deg = -deg
	case "":
		return 0, problemf(ReasonGPSMalformed, "%s without %sRef: hemisphere unknown", name, name)
	default:
		return 0, problemf(ReasonGPSMalformed, "%sRef is %q, not %s or %s", name, ref, pos, neg)
	}
	return deg, nil
}

// CheckPosition applies the rules every position must pass, from EXIF or
// anywhere else: finite, within range, and not (0, 0), which is what
// receivers without a fix write. It returns nil for a usable position.
func CheckPosition(lat, lon float64) *Problem {
	switch {
	case math.IsNaN(lat) || math.IsNaN(lon) || math.IsInf(lat, 0) || math.IsInf(lon, 0):
		return problemf(ReasonNotFinite, "position %v, %v is not finite", lat, lon)
	case lat < -90 || lat > 90:
		return problemf(ReasonOutOfRange, "latitude %g outside [-90, 90]", lat)
	case lon < -180 || lon > 180:
		return problemf(ReasonOutOfRange, "longitude %g outside [-180, 180]", lon)
	case lat == 0 && lon == 0:
		return problemf(ReasonNullIsland, "position 0, 0 (no fix)")
	}
	return nil
}

// altitude is optional: an unreadable one is dropped, not a reason to
// reject the position.
func altitude(g *gpsTags) *float64 {
	if len(g.alt) != 1 || g.alt[0].den == 0 || g.alt[0].num < 0 {
		return nil
	}
	a := g.alt[0].float()
	if len(g.altRef) == 1 && g.altRef[0] == 1 {
		a = -a
	}
	if math.IsNaN(a) || math.IsInf(a, 0) {
		return nil
	}
	return &a
}

// direction is optional like altitude; it must lie in [0, 360).
func direction(g *gpsTags) *float64 {
	if len(g.dir) != 1 || g.dir[0].den == 0 {
		return nil
	}
	d := g.dir[0].float()
	if !(d >= 0 && d < 360) {
		return nil
	}
	return &d
}

// String is "lat,lon" with six decimals (about 0.1 m), for logs.
func (g GPS) String() string { return fmt.Sprintf("%.6f,%.6f", g.Lat, g.Lon) }
