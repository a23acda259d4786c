import Dispatch
import DisplayLinkCore
import DisplaySurface
import GLESRenderer

let surface = try DisplaySurface()  // a Wayland window, or the whole screen (DRM/KMS)
DisplaySurface.installSignalHandlers()  // Ctrl-C closes it (on KMS: the console comes back)

try surface.beginFrame()  // the GL context is current: set up
let renderer = try Renderer(atlas: GlyphAtlas(pixelSizes: [14]), glesMajorVersion: surface.glesMajorVersion)
let layer = renderer.makeLayer()
surface.releaseContext()  // frames bind it again, on whichever thread runs them

final class Square { var x = 0.0 }
let square = Square()
let link = DisplayLink(source: surface, target: square) { square, link in
    square.x += 100 * link.deltaTime  // 100 points a second at any refresh rate
    try? surface.beginFrame()
    renderer.beginFrame(width: surface.width, height: surface.height, clearColor: RGBA(0, 0, 0))
    renderer.addRect(layer, Rect(x: Float(square.x), y: 100, width: 40, height: 40), color: RGBA(0.2, 0.5, 1))
    renderer.endFrame()
    try? surface.present()  // the swap (Wayland) or page flip (KMS)
}
dispatchMain()
