package photoexif

import (
	"strings"
	"time"
)

// capturedAt combines DateTimeOriginal, SubSecTimeOriginal and
// OffsetTimeOriginal. Without a usable offset the wall clock is placed in
// UTC and zoneKnown is false: EXIF before 2.31 has no time zone, and the
// camera's clock zone cannot be guessed.
func capturedAt(dateTime, subSec, offset string) (t *time.Time, zoneKnown bool) {
	dateTime = strings.TrimSpace(dateTime)
	if dateTime == "" || strings.HasPrefix(dateTime, "0000") {
		return nil, false
	}
	loc := time.UTC
	if off, err := time.Parse("-07:00", strings.TrimSpace(offset)); err == nil {
		_, secs := off.Zone()
		loc = time.FixedZone(strings.TrimSpace(offset), secs)
		zoneKnown = true
	}
	v, err := time.ParseInLocation("2006:01:02 15:04:05", dateTime, loc)
	if err != nil {
		return nil, false
	}
	if digits := strings.TrimSpace(subSec); digits != "" && len(digits) <= 9 && strings.Trim(digits, "0123456789") == "" {
		frac, _ := time.ParseDuration("0." + digits + "s")
		v = v.Add(frac)
	}
	return &v, zoneKnown
}
