module github.com/outpost-dev/outpost

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
)

require mvdan.cc/sh/v3 v3.12.0

require golang.org/x/term v0.32.0 // indirect
