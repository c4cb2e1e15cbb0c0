module github.com/outpost-dev/outpost

go 1.26.0

require (
	github.com/fsnotify/fsnotify v1.10.1
	github.com/google/uuid v1.6.0
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.50.0
	golang.org/x/text v0.44.0
)

require (
	github.com/pkg/sftp v1.13.12
	golang.org/x/crypto v0.59.0
	mvdan.cc/sh/v3 v3.12.0
)

require (
	github.com/kr/fs v0.1.0 // indirect
	golang.org/x/term v0.48.0 // indirect
)
