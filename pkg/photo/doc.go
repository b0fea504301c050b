// Package photo groups the packages that handle the uploaded image itself,
// which is untrusted input: imageformat recognises it by its leading bytes,
// photoexif reads its EXIF from the streamed head, downscale shrinks a
// photo over the service's size limit, and metastrip removes its metadata
// on the way to the service.
package photo
