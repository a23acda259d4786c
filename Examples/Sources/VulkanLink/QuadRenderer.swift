// One frame: acquire a swapchain image, clear it and draw the turned quad (SPIRV.swift's
// shaders; angle and aspect as push constants), submit; then present it (at once, or when a fed
// source says the pending one was shown) with a present id when the device has VK_KHR_present_id. Two frames in flight, each with its command buffer, its acquire
// semaphore and its fence.
import CVulkan

final class QuadRenderer {
    /// What a frame's present came to.
    enum Outcome {
        /// Presented with this id (0: the device has no present ids); `suboptimal`: the swapchain
        /// should be made again before the next frame.
        case presented(id: UInt64, suboptimal: Bool)
        /// The swapchain no longer matches the surface: make it again, then draw.
        case outOfDate
    }

    /// What drawing a frame came to.
    enum Drawn {
        case rendered(Rendered)
        /// The swapchain no longer matches the surface: make it again, then draw.
        case outOfDate
        /// No image came free within the acquire's timeout (the compositor holds them all, e.g.
        /// while the window is hidden): skip this frame.
        case noImage
    }

    let device: VulkanDevice
    let swapchain: Swapchain
    let renderPass: VkRenderPass
    private let layout: VkPipelineLayout
    private let pipeline: VkPipeline
    private let commandPool: VkCommandPool
    private var commandBuffers: [VkCommandBuffer?]
    private var imageAvailable: [VkSemaphore?] = []
    private var inFlight: [VkFence?] = []
    private var frame = 0
    private var nextPresentID: UInt64 = 1

    init(device: VulkanDevice, swapchain: Swapchain) throws {
        self.device = device
        self.swapchain = swapchain
        let vk = device.device
        renderPass = try QuadRenderer.makeRenderPass(vk, format: swapchain.format)
        var push = VkPushConstantRange(stageFlags: VK_SHADER_STAGE_VERTEX_BIT.rawValue, offset: 0, size: 16)
        var layoutInfo = VkPipelineLayoutCreateInfo()
        layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
        var madeLayout: VkPipelineLayout?
        try withUnsafePointer(to: &push) { push in
            layoutInfo.pushConstantRangeCount = 1
            layoutInfo.pPushConstantRanges = push
            try check(vkCreatePipelineLayout(vk, &layoutInfo, nil, &madeLayout), "vkCreatePipelineLayout")
        }
        layout = madeLayout!
        pipeline = try QuadPipeline.make(vk, renderPass: renderPass, layout: layout)

        var poolInfo = VkCommandPoolCreateInfo()
        poolInfo.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
        poolInfo.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT.rawValue
        poolInfo.queueFamilyIndex = device.queueFamily
        var pool: VkCommandPool?
        try check(vkCreateCommandPool(vk, &poolInfo, nil, &pool), "vkCreateCommandPool")
        commandPool = pool!
        var allocate = VkCommandBufferAllocateInfo()
        allocate.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
        allocate.commandPool = commandPool
        allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY
        allocate.commandBufferCount = 2
        commandBuffers = [nil, nil]
        try check(vkAllocateCommandBuffers(vk, &allocate, &commandBuffers), "vkAllocateCommandBuffers")
        for _ in 0..<2 {
            var semaphoreInfo = VkSemaphoreCreateInfo()
            semaphoreInfo.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO
            var semaphore: VkSemaphore?
            try check(vkCreateSemaphore(vk, &semaphoreInfo, nil, &semaphore), "vkCreateSemaphore")
            imageAvailable.append(semaphore)
            var fenceInfo = VkFenceCreateInfo()
            fenceInfo.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
            fenceInfo.flags = VK_FENCE_CREATE_SIGNALED_BIT.rawValue
            var fence: VkFence?
            try check(vkCreateFence(vk, &fenceInfo, nil, &fence), "vkCreateFence")
            inFlight.append(fence)
        }
    }

    /// A frame drawn and submitted, its image not yet presented.
    struct Rendered {
        var swapchain: VkSwapchainKHR
        var image: UInt32
        var renderFinished: VkSemaphore?
    }

    /// Draws the quad turned by `angle` into the next swapchain image and submits it.
    func render(angle: Float) throws -> Drawn {
        let vk = device.device
        guard let swapchainHandle = swapchain.handle else { return .outOfDate }
        var fence = inFlight[frame]
        try check(vkWaitForFences(vk, 1, &fence, VkBool32(VK_TRUE), UInt64.max), "vkWaitForFences")
        var imageIndex: UInt32 = 0
        let acquired = vkAcquireNextImageKHR(vk, swapchainHandle, 1_000_000_000, imageAvailable[frame], nil, &imageIndex)
        if acquired == VK_ERROR_OUT_OF_DATE_KHR { return .outOfDate }
        if acquired == VK_TIMEOUT || acquired == VK_NOT_READY { return .noImage }
        if acquired != VK_SUBOPTIMAL_KHR { try check(acquired, "vkAcquireNextImageKHR") }
        try check(vkResetFences(vk, 1, &fence), "vkResetFences")

        let commands = commandBuffers[frame]
        try record(commands, image: Int(imageIndex), angle: angle)
        var waitStage = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue
        var wait = imageAvailable[frame]
        var signal = swapchain.renderFinished[Int(imageIndex)]
        var submitted = commands
        var submit = VkSubmitInfo()
        submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO
        submit.waitSemaphoreCount = 1
        submit.commandBufferCount = 1
        submit.signalSemaphoreCount = 1
        try withUnsafePointer(to: &wait) { wait in
            try withUnsafePointer(to: &waitStage) { waitStage in
                try withUnsafePointer(to: &submitted) { submitted in
                    try withUnsafePointer(to: &signal) { signal in
                        submit.pWaitSemaphores = wait
                        submit.pWaitDstStageMask = waitStage
                        submit.pCommandBuffers = submitted
                        submit.pSignalSemaphores = signal
                        try check(vkQueueSubmit(device.queue, 1, &submit, fence), "vkQueueSubmit")
                    }
                }
            }
        }
        frame = (frame + 1) % 2
        return .rendered(Rendered(swapchain: swapchainHandle, image: imageIndex, renderFinished: signal))
    }

    /// Presents `rendered` (with the next present id when the device has present ids);
    /// `willPresent` runs right before `vkQueuePresentKHR` (the link's commit hook).
    func present(_ rendered: Rendered, willPresent: () -> Void) throws -> Outcome {
        let id = device.waitForPresent != nil ? nextPresentID : 0
        willPresent()
        let presented = present(rendered.swapchain, image: rendered.image, wait: rendered.renderFinished, id: id)
        if presented == VK_ERROR_OUT_OF_DATE_KHR { return .outOfDate }
        if presented != VK_SUBOPTIMAL_KHR { try check(presented, "vkQueuePresentKHR") }
        if id != 0 { nextPresentID += 1 }
        return .presented(id: id, suboptimal: presented == VK_SUBOPTIMAL_KHR)
    }

    private func present(_ swapchain: VkSwapchainKHR, image: UInt32, wait: VkSemaphore?, id: UInt64) -> VkResult {
        var swapchain: VkSwapchainKHR? = swapchain
        var image = image
        var wait = wait
        var id = id
        var presentID = VkPresentIdKHR()
        presentID.sType = VK_STRUCTURE_TYPE_PRESENT_ID_KHR
        presentID.swapchainCount = 1
        return withUnsafePointer(to: &id) { id in
            presentID.pPresentIds = id
            return withUnsafePointer(to: &presentID) { presentID in
                withUnsafePointer(to: &swapchain) { swapchain in
                    withUnsafePointer(to: &image) { image in
                        withUnsafePointer(to: &wait) { wait in
                            var info = VkPresentInfoKHR()
                            info.sType = VK_STRUCTURE_TYPE_PRESENT_INFO_KHR
                            info.pNext = id.pointee != 0 ? UnsafeRawPointer(presentID) : nil
                            info.waitSemaphoreCount = 1
                            info.pWaitSemaphores = wait
                            info.swapchainCount = 1
                            info.pSwapchains = swapchain
                            info.pImageIndices = image
                            return vkQueuePresentKHR(device.queue, &info)
                        }
                    }
                }
            }
        }
    }

    private func record(_ commands: VkCommandBuffer?, image: Int, angle: Float) throws {
        try check(vkResetCommandBuffer(commands, 0), "vkResetCommandBuffer")
        var begin = VkCommandBufferBeginInfo()
        begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT.rawValue
        try check(vkBeginCommandBuffer(commands, &begin), "vkBeginCommandBuffer")
        let extent = swapchain.extent
        var clear = VkClearValue()
        clear.color.float32 = (0.07, 0.08, 0.11, 1)
        var pass = VkRenderPassBeginInfo()
        pass.sType = VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO
        pass.renderPass = renderPass
        pass.framebuffer = swapchain.framebuffers[image]
        pass.renderArea = VkRect2D(offset: VkOffset2D(x: 0, y: 0), extent: extent)
        pass.clearValueCount = 1
        withUnsafePointer(to: &clear) { clear in
            pass.pClearValues = clear
            vkCmdBeginRenderPass(commands, &pass, VK_SUBPASS_CONTENTS_INLINE)
        }
        vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
        var viewport = VkViewport(
            x: 0, y: 0, width: Float(extent.width), height: Float(extent.height), minDepth: 0, maxDepth: 1)
        vkCmdSetViewport(commands, 0, 1, &viewport)
        var scissor = VkRect2D(offset: VkOffset2D(x: 0, y: 0), extent: extent)
        vkCmdSetScissor(commands, 0, 1, &scissor)
        // The quad keeps its shape in any window: the shorter side spans it.
        let side = Float(min(extent.width, extent.height))
        var push: (Float, Float, Float, Float) = (side / Float(extent.width), side / Float(extent.height), angle, 0)
        vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_VERTEX_BIT.rawValue, 0, 16, &push)
        vkCmdDraw(commands, 6, 1, 0, 0)
        vkCmdEndRenderPass(commands)
        try check(vkEndCommandBuffer(commands), "vkEndCommandBuffer")
    }

    private static func makeRenderPass(_ vk: VkDevice, format: VkFormat) throws -> VkRenderPass {
        var attachment = VkAttachmentDescription()
        attachment.format = format
        attachment.samples = VK_SAMPLE_COUNT_1_BIT
        attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR
        attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE
        attachment.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE
        attachment.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE
        attachment.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED
        attachment.finalLayout = VK_IMAGE_LAYOUT_PRESENT_SRC_KHR
        var reference = VkAttachmentReference(attachment: 0, layout: VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL)
        // The image is written only after the acquire semaphore's wait (colour output stage).
        var dependency = VkSubpassDependency()
        dependency.srcSubpass = VK_SUBPASS_EXTERNAL
        dependency.dstSubpass = 0
        dependency.srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue
        dependency.dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT.rawValue
        dependency.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT.rawValue
        return try withUnsafePointer(to: &reference) { reference in
            var subpass = VkSubpassDescription()
            subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS
            subpass.colorAttachmentCount = 1
            subpass.pColorAttachments = reference
            return try withUnsafePointer(to: &attachment) { attachment in
                try withUnsafePointer(to: &subpass) { subpass in
                    try withUnsafePointer(to: &dependency) { dependency in
                        var info = VkRenderPassCreateInfo()
                        info.sType = VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO
                        info.attachmentCount = 1
                        info.pAttachments = attachment
                        info.subpassCount = 1
                        info.pSubpasses = subpass
                        info.dependencyCount = 1
                        info.pDependencies = dependency
                        var pass: VkRenderPass?
                        try check(vkCreateRenderPass(vk, &info, nil, &pass), "vkCreateRenderPass")
                        return pass!
                    }
                }
            }
        }
    }

    /// The pipeline, pool, semaphores and fences, before the device goes (after the swapchain).
    func destroy() {
        let vk = device.device
        vkDeviceWaitIdle(vk)
        for fence in inFlight { vkDestroyFence(vk, fence, nil) }
        for semaphore in imageAvailable { vkDestroySemaphore(vk, semaphore, nil) }
        vkDestroyCommandPool(vk, commandPool, nil)
        vkDestroyPipeline(vk, pipeline, nil)
        vkDestroyPipelineLayout(vk, layout, nil)
        vkDestroyRenderPass(vk, renderPass, nil)
    }
}
