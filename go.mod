module github.com/kinformer/kinformer

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/gorilla/websocket v1.5.3
	go.yaml.in/yaml/v3 v3.0.6
	golang.org/x/net v0.62.0
)

require golang.org/x/text v0.43.0 // indirect
