package photoexif

import "time"

// Meta is what the pipeline records from a photo's EXIF block. Every field
// is optional; a field is set only when the EXIF value is present and valid.
type Meta struct {
	// GPS is the position, only when it passed every validity rule.
	GPS *GPS
	// GPSProblem says why GPS is nil; nil when GPS is set.
	GPSProblem *Problem
	// Captured is DateTimeOriginal (with SubSecTimeOriginal). With
	// OffsetTimeOriginal it is in that fixed zone and CapturedZoneKnown is
	// true; without, it is the camera's wall clock placed in UTC.
	Captured          *time.Time
	CapturedZoneKnown bool
	CameraMake        string
	CameraModel       string
}

// GPS is a valid position from EXIF, in decimal degrees (WGS 84 as EXIF
// assumes; GPSMapDatum is not interpreted).
type GPS struct {
	Lat, Lon float64
	// Altitude is metres above sea level (negative below), when present
	// and readable.
	Altitude *float64
	// Direction is the direction the camera faced (GPSImgDirection), in
	// degrees [0, 360), true or magnetic as GPSImgDirectionRef says.
	Direction *float64
}
