// The window's swapchain in FIFO mode (Mesa's Wayland WSI then paces it with wp_fifo_v1 and
// wp_commit_timing_v1 where the compositor offers them, objects the surface leaves to it), its
// image views and framebuffers, recreated at the surface's new size.
import CVulkan

final class Swapchain {
    let device: VulkanDevice
    let format: VkFormat
    private(set) var handle: VkSwapchainKHR?
    private(set) var extent = VkExtent2D()
    private(set) var views: [VkImageView?] = []
    private(set) var framebuffers: [VkFramebuffer?] = []
    /// Signalled when an image's rendering finished; the present waits on it (one per image, so
    /// that no semaphore is signalled again while a present may still wait on it).
    private(set) var renderFinished: [VkSemaphore?] = []
    /// How many times the swapchain was made (1 at start; each resize adds one).
    private(set) var generation = 0

    init(device: VulkanDevice) throws {
        self.device = device
        var count: UInt32 = 0
        try check(
            vkGetPhysicalDeviceSurfaceFormatsKHR(device.physicalDevice, device.surface, &count, nil), "vkGetPhysicalDeviceSurfaceFormatsKHR"
        )
        var formats = [VkSurfaceFormatKHR](repeating: VkSurfaceFormatKHR(), count: Int(count))
        try check(
            vkGetPhysicalDeviceSurfaceFormatsKHR(device.physicalDevice, device.surface, &count, &formats),
            "vkGetPhysicalDeviceSurfaceFormatsKHR")
        guard let first = formats.first else { throw ExampleError("the surface offers no format") }
        format = formats.first { $0.format == VK_FORMAT_B8G8R8A8_UNORM }?.format ?? first.format
    }

    /// Makes the swapchain (again) at `width`×`height` pixels, the old one retired into it.
    func make(width: UInt32, height: UInt32, renderPass: VkRenderPass) throws {
        vkDeviceWaitIdle(device.device)
        var capabilities = VkSurfaceCapabilitiesKHR()
        try check(
            vkGetPhysicalDeviceSurfaceCapabilitiesKHR(device.physicalDevice, device.surface, &capabilities),
            "vkGetPhysicalDeviceSurfaceCapabilitiesKHR")
        // Wayland leaves the size to the client (currentExtent 0xFFFFFFFF): the surface's.
        extent =
            capabilities.currentExtent.width == UInt32.max
            ? VkExtent2D(
                width: min(max(width, capabilities.minImageExtent.width), capabilities.maxImageExtent.width),
                height: min(max(height, capabilities.minImageExtent.height), capabilities.maxImageExtent.height))
            : capabilities.currentExtent
        var imageCount = capabilities.minImageCount + 1
        if capabilities.maxImageCount > 0 { imageCount = min(imageCount, capabilities.maxImageCount) }
        var info = VkSwapchainCreateInfoKHR()
        info.sType = VK_STRUCTURE_TYPE_SWAPCHAIN_CREATE_INFO_KHR
        info.surface = device.surface
        info.minImageCount = imageCount
        info.imageFormat = format
        info.imageColorSpace = VK_COLOR_SPACE_SRGB_NONLINEAR_KHR
        info.imageExtent = extent
        info.imageArrayLayers = 1
        info.imageUsage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT.rawValue
        info.imageSharingMode = VK_SHARING_MODE_EXCLUSIVE
        info.preTransform = capabilities.currentTransform
        info.compositeAlpha =
            capabilities.supportedCompositeAlpha & VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR.rawValue != 0
            ? VK_COMPOSITE_ALPHA_OPAQUE_BIT_KHR : VK_COMPOSITE_ALPHA_INHERIT_BIT_KHR
        info.presentMode = VK_PRESENT_MODE_FIFO_KHR
        info.clipped = VkBool32(VK_TRUE)
        info.oldSwapchain = handle
        var made: VkSwapchainKHR?
        try check(vkCreateSwapchainKHR(device.device, &info, nil, &made), "vkCreateSwapchainKHR")
        destroyImages()
        if let handle { vkDestroySwapchainKHR(device.device, handle, nil) }
        handle = made
        generation += 1

        var count: UInt32 = 0
        try check(vkGetSwapchainImagesKHR(device.device, made, &count, nil), "vkGetSwapchainImagesKHR")
        var images = [VkImage?](repeating: nil, count: Int(count))
        try check(vkGetSwapchainImagesKHR(device.device, made, &count, &images), "vkGetSwapchainImagesKHR")
        for image in images {
            var viewInfo = VkImageViewCreateInfo()
            viewInfo.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO
            viewInfo.image = image
            viewInfo.viewType = VK_IMAGE_VIEW_TYPE_2D
            viewInfo.format = format
            viewInfo.subresourceRange = VkImageSubresourceRange(
                aspectMask: VK_IMAGE_ASPECT_COLOR_BIT.rawValue, baseMipLevel: 0, levelCount: 1, baseArrayLayer: 0, layerCount: 1)
            var view: VkImageView?
            try check(vkCreateImageView(device.device, &viewInfo, nil, &view), "vkCreateImageView")
            views.append(view)
            var framebufferInfo = VkFramebufferCreateInfo()
            framebufferInfo.sType = VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO
            framebufferInfo.renderPass = renderPass
            framebufferInfo.attachmentCount = 1
            framebufferInfo.width = extent.width
            framebufferInfo.height = extent.height
            framebufferInfo.layers = 1
            var framebuffer: VkFramebuffer?
            try withUnsafePointer(to: &view) { attachment in
                framebufferInfo.pAttachments = attachment
                try check(vkCreateFramebuffer(device.device, &framebufferInfo, nil, &framebuffer), "vkCreateFramebuffer")
            }
            framebuffers.append(framebuffer)
            var semaphoreInfo = VkSemaphoreCreateInfo()
            semaphoreInfo.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO
            var semaphore: VkSemaphore?
            try check(vkCreateSemaphore(device.device, &semaphoreInfo, nil, &semaphore), "vkCreateSemaphore")
            renderFinished.append(semaphore)
        }
    }

    private func destroyImages() {
        for framebuffer in framebuffers { vkDestroyFramebuffer(device.device, framebuffer, nil) }
        for view in views { vkDestroyImageView(device.device, view, nil) }
        for semaphore in renderFinished { vkDestroySemaphore(device.device, semaphore, nil) }
        framebuffers.removeAll()
        views.removeAll()
        renderFinished.removeAll()
    }

    /// Everything made from the device, before the device goes.
    func destroy() {
        vkDeviceWaitIdle(device.device)
        destroyImages()
        if let handle { vkDestroySwapchainKHR(device.device, handle, nil) }
        handle = nil
    }
}
