// Vulkan with its Wayland surface extension (VK_KHR_wayland_surface), for Examples/VulkanLink.
#define VK_USE_PLATFORM_WAYLAND_KHR 1
#include <vulkan/vulkan.h>
