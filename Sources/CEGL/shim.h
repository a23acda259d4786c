/* Keep X11 out of the EGL platform types: this project uses Wayland, GBM and surfaceless. */
#define EGL_NO_X11 1
#define MESA_EGL_NO_X11_HEADERS 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
