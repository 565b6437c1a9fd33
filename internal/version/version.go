/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package version holds the operator's version, set at build time with
// -ldflags "-X github.com/videoops/video-operator/internal/version.Version=v1.2.3".
package version

// Version is the operator's release version; "dev" for a local build.
var Version = "dev"

// UserAgent is the User-Agent the operator sends to the video service.
func UserAgent() string { return "video-operator/" + Version }
