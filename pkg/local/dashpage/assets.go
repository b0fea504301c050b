package dashpage

import _ "embed"

// echartsJS is Apache ECharts 5.4.3 (the version go-echarts v2.4.5 is built
// for), the "common" build from the echarts npm package's dist/: line, bar,
// pie and scatter charts with the grid, legend, tooltip, title, dataZoom and
// markLine/markArea components, which is all the page uses, at about two
// thirds of the full build's size. It is inlined into every page so the page
// needs no network. assets/LICENSE, NOTICE and LICENSE-d3 are its licence.
//
//go:embed assets/echarts.common.min.js
var echartsJS string
